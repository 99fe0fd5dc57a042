-- V8__search_path.sql: the SQL producer API resolves names only in
-- pg_catalog, whoever calls it; json_quote() in linear time; identity
-- numbers a double cannot hold refused; the outbox_producer role.
--
-- The functions run with the caller's rights and, until now, the caller's
-- search_path.  A role that may create objects in a schema on that path
-- (public, on clusters upgraded from PostgreSQL 14 or older, lets every
-- role do so) could create public.to_json(text): an exact match for a
-- text argument beats pg_catalog's polymorphic to_json(anyelement), so
-- every enqueue, by any role, postgres included, ran that function.
-- Pinning "pg_catalog, pg_temp" leaves nothing to hijack: the tables are
-- schema-qualified and pg_temp is never searched for functions or
-- operators.  Every function of the outbox schema, and of any plugin's
-- schema, must be pinned the same way (tests/integration/test_search_path.sh).

-- A JSON string as jansson prints it (see V4): to_json() prints the same
-- text except that the hex of a \u00XX escape is lower case, which matters
-- only for U+000B, U+000E, U+000F and U+001A..U+001F.  V4 rebuilt such a
-- string one character at a time (quadratic: 608 ms for 160 KB); here the
-- escapes are upper-cased with replace(), after every escaped backslash
-- ("\\") has been set aside as U+0001, which to_json() never leaves raw, so
-- that an input "\u001a" (escaped as "\\u001a") is left alone; one pass
-- per such character present, not per occurrence.  String literals are E''
-- so that standard_conforming_strings cannot change them.
CREATE OR REPLACE FUNCTION outbox.json_quote(value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    out text := pg_catalog.to_json(value)::text;
    code integer;
    hex text;
    masked boolean := false;
BEGIN
    IF value !~ E'[\\x0b\\x0e\\x0f\\x1a-\\x1f]' THEN
        RETURN out;
    END IF;
    FOREACH code IN ARRAY ARRAY[11, 14, 15, 26, 27, 28, 29, 30, 31] LOOP
        CONTINUE WHEN pg_catalog.strpos(value, pg_catalog.chr(code)) = 0;
        IF NOT masked THEN
            out := pg_catalog.replace(out, E'\\\\', pg_catalog.chr(1));
            masked := true;
        END IF;
        hex := pg_catalog.lpad(pg_catalog.to_hex(code), 4, '0');
        out := pg_catalog.replace(out, E'\\u' || hex, E'\\u' || pg_catalog.upper(hex));
    END LOOP;
    RETURN CASE WHEN masked THEN pg_catalog.replace(out, pg_catalog.chr(1), E'\\\\') ELSE out END;
END
$$;

-- A JSON number as jansson prints it (see V4), and now refused when a
-- double cannot hold it as written: 9007199254740993.0 is read as
-- 9007199254740992.0, so the two would be one job.  A number survives when
-- the double it is read as, printed with as many significant digits as the
-- text has, gives the number back (0.1 and 0.10000000000000001 both do:
-- they are two spellings of one double).  liboutbox's
-- outbox_check_identity_numbers() applies the same rule
-- (tests/integration/test_identity.c checks that they agree).
CREATE OR REPLACE FUNCTION outbox.json_number(value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    n numeric;
    d float8;
    sci text;
    neg boolean;
    digits text;
    exp integer;
    whole text;
    frac text;
BEGIN
    IF value ~ '^-?[0-9]{1,18}$' THEN
        RETURN value::bigint::text; -- every such integer fits in 64 bits
    END IF;
    IF value ~ '^-?[0-9]+$' THEN
        n := value::numeric;
        IF n < -9223372036854775808 OR n > 9223372036854775807 THEN
            RAISE EXCEPTION 'number % in a job identity is out of range for a 64-bit integer', value
                USING ERRCODE = 'numeric_value_out_of_range';
        END IF;
        RETURN n::text;
    END IF;
    d := value::float8;
    -- the significant digits as written, without leading or trailing zeros
    digits := pg_catalog.regexp_replace(pg_catalog.split_part(pg_catalog.lower(value), 'e', 1),
                                        '[^0-9]', '', 'g');
    digits := pg_catalog.rtrim(pg_catalog.ltrim(digits, '0'), '0');
    IF digits <> '' AND value::numeric <> pg_catalog.btrim(pg_catalog.to_char(d,
            '9' || CASE WHEN pg_catalog.length(digits) > 1
                        THEN '.' || pg_catalog.repeat('9', pg_catalog.length(digits) - 1)
                        ELSE '' END || 'EEEE'))::numeric THEN
        RAISE EXCEPTION 'number % in a job identity does not survive a round trip through a double', value
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = 'It is read as ' || d::text || ', which other numbers are read as too.',
                  HINT = 'Write it as an integer, as a string, or with the digits a double holds.';
    END IF;
    sci := pg_catalog.btrim(pg_catalog.to_char(d, '9.9999999999999999EEEE'));
    neg := pg_catalog.left(sci, 1) = '-';
    sci := pg_catalog.ltrim(sci, '-');
    digits := pg_catalog.rtrim(pg_catalog.left(sci, 1) || pg_catalog.substr(sci, 3, 16), '0');
    exp := pg_catalog.split_part(sci, 'e', 2)::integer;
    IF digits = '' THEN
        digits := '0';
        exp := 0;
    END IF;
    IF exp < -4 OR exp >= 17 THEN
        sci := pg_catalog.left(digits, 1)
            || CASE WHEN pg_catalog.length(digits) > 1 THEN '.' || pg_catalog.substr(digits, 2) ELSE '' END
            || 'e' || exp::text;
    ELSIF exp >= 0 THEN
        whole := pg_catalog.rpad(pg_catalog.left(digits, exp + 1), exp + 1, '0');
        frac := pg_catalog.substr(digits, exp + 2);
        sci := whole || '.' || CASE WHEN frac = '' THEN '0' ELSE frac END;
    ELSE
        sci := '0.' || pg_catalog.repeat('0', -exp - 1) || digits;
    END IF;
    RETURN CASE WHEN neg THEN '-' ELSE '' END || sci;
END
$$;

-- V4's canonical form, with strings that need no upper-casing (nearly all)
-- quoted by to_json() inline: each call of a function with a SET clause
-- saves and restores the setting, which for the members of an identity
-- cost a quarter of job_id()'s time.
CREATE OR REPLACE FUNCTION outbox.canonical_json(value json) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    out text;
    dup text;
    has_dup boolean;
BEGIN
    CASE pg_catalog.json_typeof(value)
    WHEN 'object' THEN
        -- scalars inline: a call of canonical_json() per member would double the cost
        SELECT '{' || coalesce(pg_catalog.string_agg(
                   CASE WHEN e.key !~ E'[\\x0b\\x0e\\x0f\\x1a-\\x1f]'
                        THEN pg_catalog.to_json(e.key)::text ELSE outbox.json_quote(e.key) END
                   || ':' || CASE pg_catalog.json_typeof(e.value)
                   WHEN 'string' THEN CASE WHEN (e.value #>> '{}') !~ E'[\\x0b\\x0e\\x0f\\x1a-\\x1f]'
                                           THEN pg_catalog.to_json(e.value #>> '{}')::text
                                           ELSE outbox.json_quote(e.value #>> '{}') END
                   WHEN 'number' THEN outbox.json_number(e.value::text)
                   WHEN 'boolean' THEN e.value::text
                   WHEN 'null' THEN 'null'
                   ELSE outbox.canonical_json(e.value) END, ',' ORDER BY e.ord), '')
               || '}',
               pg_catalog.count(*) <> pg_catalog.count(DISTINCT e.key)
          INTO out, has_dup FROM pg_catalog.json_each(value) WITH ORDINALITY AS e(key, value, ord);
        IF has_dup THEN
            SELECT key INTO dup FROM pg_catalog.json_each(value) GROUP BY key HAVING pg_catalog.count(*) > 1 LIMIT 1;
            RAISE EXCEPTION 'duplicate member "%" in a JSON object', dup
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    WHEN 'array' THEN
        SELECT '[' || coalesce(pg_catalog.string_agg(outbox.canonical_json(e.value), ',' ORDER BY e.ord), '')
               || ']'
          INTO out FROM pg_catalog.json_array_elements(value) WITH ORDINALITY AS e(value, ord);
    WHEN 'string' THEN
        out := outbox.json_quote(value #>> '{}');
    WHEN 'number' THEN
        out := outbox.json_number(pg_catalog.btrim(value::text, E' \t\r\n'));
    ELSE
        out := pg_catalog.btrim(value::text, E' \t\r\n'); -- true, false, null
    END CASE;
    RETURN out;
END
$$;

-- The bodies of the others resolve correctly once the path is pinned.
ALTER FUNCTION outbox.job_id(json) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION outbox.enqueue(text, text, json, jsonb, text, text, timestamptz, integer)
    SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION outbox.confirm_price_window(text, text, timestamptz, text, text, boolean, text)
    SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION outbox.notify_outbox_idle() SET search_path = pg_catalog, pg_temp;

-- The producer's rights (docs/producers.md, "Rights"): enqueue, the price
-- path, and the trigger's look at outbox.relay_idle.  Roles belong to the
-- cluster, so another database's migration may have created it already;
-- two migrations at once may both find it missing.  A migrating role that
-- may not create roles gets a warning and the statements to run by hand.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'outbox_producer') THEN
        BEGIN
            CREATE ROLE outbox_producer NOLOGIN;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN
                NULL;
            WHEN insufficient_privilege THEN
                RAISE WARNING 'role "outbox_producer" not created: % may not create roles', current_user
                    USING HINT = 'Create it (CREATE ROLE outbox_producer NOLOGIN) and grant it the rights docs/producers.md lists.';
                RETURN;
        END;
    END IF;
    GRANT USAGE ON SCHEMA outbox TO outbox_producer;
    GRANT SELECT, INSERT ON outbox.jobs TO outbox_producer;
    -- ON CONFLICT (event_id) reads the conflict target, nothing else
    GRANT INSERT, SELECT (event_id) ON outbox.outbox_events TO outbox_producer;
    GRANT SELECT ON outbox.relay_idle TO outbox_producer;
    GRANT SELECT, INSERT, UPDATE ON outbox.price_windows TO outbox_producer;
    GRANT EXECUTE ON FUNCTION
        outbox.json_quote(text), outbox.json_number(text), outbox.canonical_json(json),
        outbox.job_id(json),
        outbox.enqueue(text, text, json, jsonb, text, text, timestamptz, integer),
        outbox.confirm_price_window(text, text, timestamptz, text, text, boolean, text)
        TO outbox_producer;
END
$$;
