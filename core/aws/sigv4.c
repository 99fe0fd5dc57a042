/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/sigv4.c: AWS Signature Version 4 (see sigv4.h and docs/aws-signing.md).
 *
 * Strings are built in a growable buffer whose out-of-memory state is
 * sticky, so the builders can append without checking every call and test
 * once at the end.
 */
#include "aws/sigv4.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "aws/crypto.h"
#include "common/hexdigest.h"
#include "common/log.h"

#define SIGV4_ALGORITHM "AWS4-HMAC-SHA256"
#define AMZ_DATE_LEN 16 /* 20150830T123600Z */

struct sbuf {
	char *p;
	size_t len;
	size_t cap;
	bool oom;
};

static void sb_putn(struct sbuf *sb, const char *s, size_t n)
{
	if (sb->oom)
		return;
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 128;
		while (cap < sb->len + n + 1)
			cap *= 2;
		char *p = realloc(sb->p, cap);
		if (p == NULL) {
			sb->oom = true;
			return;
		}
		sb->p = p;
		sb->cap = cap;
	}
	memcpy(sb->p + sb->len, s, n);
	sb->len += n;
	sb->p[sb->len] = '\0';
}

static void sb_puts(struct sbuf *sb, const char *s)
{
	sb_putn(sb, s, strlen(s));
}

static void sb_putc(struct sbuf *sb, char c)
{
	sb_putn(sb, &c, 1);
}

/* Returns the string (caller frees) or NULL after an allocation failure. */
static char *sb_take(struct sbuf *sb)
{
	char *p;

	if (sb->oom) {
		free(sb->p);
		*sb = (struct sbuf){0};
		return NULL;
	}
	p = sb->p != NULL ? sb->p : strdup("");
	*sb = (struct sbuf){0};
	return p;
}

static void sb_free(struct sbuf *sb)
{
	free(sb->p);
	*sb = (struct sbuf){0};
}

static bool is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool is_pct_triplet(const char *s, size_t n, size_t i)
{
	return i + 2 < n && s[i] == '%' &&
	       hex_value((unsigned char)s[i + 1]) >= 0 &&
	       hex_value((unsigned char)s[i + 2]) >= 0;
}

static void sb_put_pct(struct sbuf *sb, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";
	char t[3] = {'%', hex[c >> 4], hex[c & 0xf]};

	sb_putn(sb, t, sizeof(t));
}

static void sb_put_encoded(struct sbuf *sb, const char *s, size_t n,
                           bool keep_slash)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (is_unreserved(c) || (keep_slash && c == '/'))
			sb_putc(sb, (char)c);
		else
			sb_put_pct(sb, c);
	}
}

char *sigv4_uri_encode(const char *s, bool keep_slash)
{
	struct sbuf sb = {0};

	sb_put_encoded(&sb, s, strlen(s), keep_slash);
	return sb_take(&sb);
}

bool sigv4_needs_security_token(const struct sigv4_credentials *creds)
{
	return creds->session_token != NULL && creds->session_token[0] != '\0';
}

/* Decodes %XX triplets of s[0..n) into out (room for n bytes); returns the
 * decoded length.  A '%' not followed by two hex digits stays literal. */
static size_t pct_decode(const char *s, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (is_pct_triplet(s, n, i)) {
			out[o++] = (char)(hex_value((unsigned char)s[i + 1]) * 16 +
			                  hex_value((unsigned char)s[i + 2]));
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	return o;
}

/* ---- canonical query ---------------------------------------------------- */

struct qparam {
	char *name;  /* encoded */
	char *value; /* encoded */
};

static int qparam_cmp(const void *a, const void *b)
{
	const struct qparam *x = a;
	const struct qparam *y = b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : strcmp(x->value, y->value);
}

/* Decode then re-encode s[0..n), so that "%41" and "A" sign alike. */
static char *reencode(const char *s, size_t n)
{
	struct sbuf sb = {0};
	char *tmp = malloc(n + 1);
	size_t len;

	if (tmp == NULL)
		return NULL;
	len = pct_decode(s, n, tmp);
	sb_put_encoded(&sb, tmp, len, false);
	free(tmp);
	if (sb.p == NULL && !sb.oom)
		return strdup("");
	return sb_take(&sb);
}

static void free_qparams(struct qparam *params, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(params[i].name);
		free(params[i].value);
	}
	free(params);
}

/* Splits query into encoded name/value pairs; *out is freed with
 * free_qparams().  0 ok, -1 out of memory. */
static int parse_query(const char *query, struct qparam **out, size_t *n_out)
{
	size_t max = 1;
	size_t n = 0;
	struct qparam *params;
	const char *p = query;

	for (const char *q = query; *q != '\0'; q++)
		max += *q == '&';
	params = calloc(max, sizeof(*params));
	if (params == NULL)
		return -1;
	while (*p != '\0') {
		size_t len = strcspn(p, "&");
		const char *eq = memchr(p, '=', len);
		size_t name_len = eq != NULL ? (size_t)(eq - p) : len;

		if (len > 0) {
			params[n].name = reencode(p, name_len);
			params[n].value = eq != NULL ? reencode(eq + 1, len - name_len - 1)
			                             : strdup("");
			n++;
			if (params[n - 1].name == NULL || params[n - 1].value == NULL) {
				free_qparams(params, n);
				return -1;
			}
		}
		p += len;
		if (*p == '&')
			p++;
	}
	*out = params;
	*n_out = n;
	return 0;
}

static void put_canonical_query(struct sbuf *sb, const char *query)
{
	struct qparam *params = NULL;
	size_t n = 0;

	if (query == NULL || query[0] == '\0')
		return;
	if (parse_query(query, &params, &n) < 0) {
		sb->oom = true;
		return;
	}
	qsort(params, n, sizeof(*params), qparam_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			sb_putc(sb, '&');
		sb_puts(sb, params[i].name);
		sb_putc(sb, '=');
		sb_puts(sb, params[i].value);
	}
	free_qparams(params, n);
}

/* ---- canonical URI ------------------------------------------------------ */

struct segment {
	const char *p;
	size_t len;
};

/* Non-S3: remove empty, "." and ".." segments, then encode each segment
 * (so an already-encoded path is encoded a second time). */
static void put_normalised_path(struct sbuf *sb, const char *path)
{
	size_t max = 1;
	size_t n = 0;
	size_t len = strlen(path);
	struct segment *segs;
	const char *p = path;

	for (const char *q = path; *q != '\0'; q++)
		max += *q == '/';
	segs = calloc(max, sizeof(*segs));
	if (segs == NULL) {
		sb->oom = true;
		return;
	}
	while (*p != '\0') {
		size_t seg_len = strcspn(p, "/");
		if (seg_len == 2 && p[0] == '.' && p[1] == '.') {
			if (n > 0)
				n--;
		} else if (!(seg_len == 0 || (seg_len == 1 && p[0] == '.'))) {
			segs[n++] = (struct segment){p, seg_len};
		}
		p += seg_len;
		if (*p == '/')
			p++;
	}
	for (size_t i = 0; i < n; i++) {
		sb_putc(sb, '/');
		sb_put_encoded(sb, segs[i].p, segs[i].len, false);
	}
	if (n == 0 || (len > 0 && path[len - 1] == '/'))
		sb_putc(sb, '/');
	free(segs);
}

/* S3: the path as sent; only bytes that could not be sent raw are encoded,
 * so an encoded path is unchanged and a raw one is encoded once. */
static void put_s3_path(struct sbuf *sb, const char *path)
{
	size_t n = strlen(path);

	if (n == 0 || path[0] != '/')
		sb_putc(sb, '/');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		if (is_unreserved(c) || c == '/' || is_pct_triplet(path, n, i))
			sb_putc(sb, (char)c);
		else
			sb_put_pct(sb, c);
	}
}

/* ---- canonical headers -------------------------------------------------- */

struct chdr {
	char *name;  /* lower case */
	char *value; /* trimmed, inner runs of blanks collapsed */
	size_t order;
};

static int chdr_cmp(const void *a, const void *b)
{
	const struct chdr *x = a;
	const struct chdr *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static char *normalise_value(const char *v)
{
	struct sbuf sb = {0};
	bool pending_space = false;

	while (is_blank(*v))
		v++;
	for (; *v != '\0'; v++) {
		if (is_blank(*v)) {
			pending_space = true;
			continue;
		}
		if (pending_space)
			sb_putc(&sb, ' ');
		pending_space = false;
		sb_putc(&sb, *v);
	}
	if (sb.p == NULL && !sb.oom)
		return strdup("");
	return sb_take(&sb);
}

static char *lower_dup(const char *s)
{
	char *d = strdup(s);

	for (char *p = d; p != NULL && *p != '\0'; p++) {
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	}
	return d;
}

static void free_chdrs(struct chdr *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
}

/* Sorted copy of the request's headers; 0 ok, -1 out of memory. */
static int sorted_headers(const struct sigv4_request *req, struct chdr **out)
{
	struct chdr *h = calloc(req->n_headers + 1, sizeof(*h));

	if (h == NULL)
		return -1;
	for (size_t i = 0; i < req->n_headers; i++) {
		h[i].name = lower_dup(req->headers[i].name);
		h[i].value = normalise_value(req->headers[i].value);
		h[i].order = i;
		if (h[i].name == NULL || h[i].value == NULL) {
			free_chdrs(h, i + 1);
			return -1;
		}
	}
	qsort(h, req->n_headers, sizeof(*h), chdr_cmp);
	*out = h;
	return 0;
}

/* Appends "name:v1,v2\n" lines to sb and "name;name" to signed_hdrs. */
static void put_canonical_headers(struct sbuf *sb, struct sbuf *signed_hdrs,
                                  const struct sigv4_request *req)
{
	struct chdr *h = NULL;
	size_t n = req->n_headers;

	if (sorted_headers(req, &h) < 0) {
		sb->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		bool same = i > 0 && strcmp(h[i].name, h[i - 1].name) == 0;
		if (same) {
			sb_putc(sb, ',');
		} else {
			if (i > 0) {
				sb_putc(sb, '\n');
				sb_putc(signed_hdrs, ';');
			}
			sb_puts(sb, h[i].name);
			sb_putc(sb, ':');
			sb_puts(signed_hdrs, h[i].name);
		}
		sb_puts(sb, h[i].value);
	}
	if (n > 0)
		sb_putc(sb, '\n');
	if (signed_hdrs->oom)
		sb->oom = true;
	free_chdrs(h, n);
}

/* ---- request checks ----------------------------------------------------- */

/* The first header named name (any case), or NULL. */
static const char *find_header(const struct sigv4_request *req, const char *name)
{
	for (size_t i = 0; i < req->n_headers; i++) {
		if (strcasecmp(req->headers[i].name, name) == 0)
			return req->headers[i].value;
	}
	return NULL;
}

/* Copies the trimmed x-amz-date into out; 0 ok, -1 missing or malformed. */
static int get_amz_date(const struct sigv4_request *req, char out[AMZ_DATE_LEN + 1])
{
	const char *v = find_header(req, "x-amz-date");
	size_t len;

	if (v == NULL) {
		log_error("cannot sign request: header \"x-amz-date\" is missing");
		return -1;
	}
	while (is_blank(*v))
		v++;
	len = strcspn(v, " \t");
	if (len != AMZ_DATE_LEN || v[8] != 'T' || v[15] != 'Z') {
		log_error("cannot sign request: header \"x-amz-date\" is not of the form YYYYMMDDTHHMMSSZ");
		return -1;
	}
	memcpy(out, v, AMZ_DATE_LEN);
	out[AMZ_DATE_LEN] = '\0';
	return 0;
}

static int check_request(const struct sigv4_request *req,
                         const struct sigv4_scope *scope)
{
	char date[AMZ_DATE_LEN + 1];

	if (req->method == NULL || scope->region == NULL || scope->service == NULL) {
		log_error("cannot sign request: method, region or service is missing");
		return -1;
	}
	if (find_header(req, "host") == NULL) {
		log_error("cannot sign request: header \"host\" is missing");
		return -1;
	}
	return get_amz_date(req, date);
}

static void put_payload_hash(struct sbuf *sb, const struct sigv4_request *req)
{
	const char *given = req->payload_hash;
	char hex[65];

	if (given == NULL)
		given = find_header(req, SIGV4_CONTENT_SHA256_HEADER);
	if (given != NULL) {
		char *v = normalise_value(given);
		if (v == NULL)
			sb->oom = true;
		else
			sb_puts(sb, v);
		free(v);
		return;
	}
	if (sha256_hex(req->body != NULL ? req->body : "", req->body_len, hex) < 0)
		sb->oom = true;
	sb_puts(sb, hex);
}

/* ---- assembling --------------------------------------------------------- */

/* Canonical request into *creq, signed-header list into *signed_hdrs (both
 * caller frees); 0 ok, -1 error (logged when it is not memory). */
static int build_canonical(const struct sigv4_request *req,
                           const struct sigv4_scope *scope, char **creq,
                           char **signed_hdrs)
{
	struct sbuf sb = {0};
	struct sbuf sh = {0};
	const char *path = req->path != NULL ? req->path : "";

	if (check_request(req, scope) < 0)
		return -1;
	sb_puts(&sb, req->method);
	sb_putc(&sb, '\n');
	if (scope->s3_path_rules)
		put_s3_path(&sb, path);
	else
		put_normalised_path(&sb, path);
	sb_putc(&sb, '\n');
	put_canonical_query(&sb, req->query);
	sb_putc(&sb, '\n');
	put_canonical_headers(&sb, &sh, req);
	sb_putc(&sb, '\n');
	sb_puts(&sb, sh.p != NULL ? sh.p : "");
	sb_putc(&sb, '\n');
	put_payload_hash(&sb, req);
	if (sb.oom || sh.oom) {
		log_error("cannot sign request: out of memory");
		sb_free(&sb);
		sb_free(&sh);
		return -1;
	}
	*creq = sb_take(&sb);
	*signed_hdrs = sb_take(&sh);
	return 0;
}

char *sigv4_canonical_request(const struct sigv4_request *req,
                              const struct sigv4_scope *scope)
{
	char *creq = NULL;
	char *signed_hdrs = NULL;

	if (build_canonical(req, scope, &creq, &signed_hdrs) < 0)
		return NULL;
	free(signed_hdrs);
	return creq;
}

static void put_scope(struct sbuf *sb, const char *amz_date,
                      const struct sigv4_scope *scope)
{
	sb_putn(sb, amz_date, 8);
	sb_putc(sb, '/');
	sb_puts(sb, scope->region);
	sb_putc(sb, '/');
	sb_puts(sb, scope->service);
	sb_puts(sb, "/aws4_request");
}

/* String to sign into *sts and signed headers into *signed_hdrs (caller
 * frees both); 0 ok, -1 error. */
static int build_string_to_sign(const struct sigv4_request *req,
                                const struct sigv4_scope *scope, char **sts,
                                char **signed_hdrs)
{
	char *creq = NULL;
	char date[AMZ_DATE_LEN + 1];
	char hex[65];
	struct sbuf sb = {0};

	if (build_canonical(req, scope, &creq, signed_hdrs) < 0)
		return -1;
	if (get_amz_date(req, date) < 0)
		goto fail;
	if (sha256_hex(creq, strlen(creq), hex) < 0) {
		log_error("could not compute SHA-256 digest");
		goto fail;
	}
	sb_puts(&sb, SIGV4_ALGORITHM "\n");
	sb_puts(&sb, date);
	sb_putc(&sb, '\n');
	put_scope(&sb, date, scope);
	sb_putc(&sb, '\n');
	sb_puts(&sb, hex);
	*sts = sb_take(&sb);
	if (*sts == NULL)
		goto fail;
	free(creq);
	return 0;
fail:
	free(creq);
	free(*signed_hdrs);
	*signed_hdrs = NULL;
	return -1;
}

char *sigv4_string_to_sign(const struct sigv4_request *req,
                           const struct sigv4_scope *scope)
{
	char *sts = NULL;
	char *signed_hdrs = NULL;

	if (build_string_to_sign(req, scope, &sts, &signed_hdrs) < 0)
		return NULL;
	free(signed_hdrs);
	return sts;
}

static int check_token_header(const struct sigv4_request *req,
                              const struct sigv4_credentials *creds)
{
	const char *v;

	if (!sigv4_needs_security_token(creds))
		return 0;
	v = find_header(req, SIGV4_SECURITY_TOKEN_HEADER);
	if (v == NULL || strcmp(v, creds->session_token) != 0) {
		log_error("cannot sign request: credentials have a session token but header \"%s\" does not carry it",
		          SIGV4_SECURITY_TOKEN_HEADER);
		return -1;
	}
	return 0;
}

void sigv4_key_cache_clear(struct sigv4_key_cache *cache)
{
	OPENSSL_cleanse(cache, sizeof(*cache)); /* zeroes: empty again */
}

/* SHA-256 of the secret: what the cache compares, so that it holds no
 * copy of the secret itself.  0 or -1. */
static int secret_digest(const char *secret, unsigned char out[32])
{
	const EVP_MD *sha256 = aws_crypto_sha256();
	unsigned int len = 0;

	if (sha256 == NULL || EVP_Digest(secret, strlen(secret), out, &len, sha256, NULL) != 1 ||
	    len != 32)
		return -1;
	return 0;
}

/*
 * The signing key of creds for the date date8 (borrowed, 8 characters) and
 * scope into key: cache's when it was derived from the same secret and
 * scope, else derived and, with a cache, kept there.  0 or -1.
 */
static int signing_key(const struct sigv4_credentials *creds, const char *date8,
                       const struct sigv4_scope *scope, struct sigv4_key_cache *cache,
                       unsigned char key[32])
{
	char id[sizeof(cache->scope)];
	unsigned char secret[32];
	int n = snprintf(id, sizeof(id), "%.8s/%s/%s", date8, scope->region, scope->service);
	bool cacheable = cache != NULL && n > 0 && (size_t)n < sizeof(id) &&
	                 secret_digest(creds->secret_access_key, secret) == 0;
	int rc = 0;

	if (cacheable && cache->scope[0] != '\0' && strcmp(cache->scope, id) == 0 &&
	    CRYPTO_memcmp(cache->secret_sha256, secret, sizeof(secret)) == 0) {
		memcpy(key, cache->key, 32);
	} else if (sigv4_signing_key(creds->secret_access_key, date8, scope->region,
	                             scope->service, key) < 0) {
		rc = -1;
	} else if (cacheable) {
		memcpy(cache->scope, id, (size_t)n + 1);
		memcpy(cache->secret_sha256, secret, sizeof(secret));
		memcpy(cache->key, key, 32);
	}
	OPENSSL_cleanse(secret, sizeof(secret));
	return rc;
}

char *sigv4_authorization_cached(const struct sigv4_request *req,
                                 const struct sigv4_scope *scope,
                                 const struct sigv4_credentials *creds,
                                 struct sigv4_key_cache *cache)
{
	char *sts = NULL;
	char *signed_hdrs = NULL;
	char *result = NULL;
	unsigned char key[32];
	unsigned char sig[32];
	char sig_hex[65];
	struct sbuf sb = {0};

	if (creds->access_key_id == NULL || creds->secret_access_key == NULL) {
		log_error("cannot sign request: no access key");
		return NULL;
	}
	if (check_token_header(req, creds) < 0)
		return NULL;
	if (build_string_to_sign(req, scope, &sts, &signed_hdrs) < 0)
		return NULL;
	/* The date is the second line of the string to sign. */
	if (signing_key(creds, sts + strlen(SIGV4_ALGORITHM "\n"), scope, cache, key) < 0)
		goto out;
	if (sigv4_hmac_sha256(key, sizeof(key), sts, strlen(sts), sig) < 0)
		goto out;
	hex_encode(sig, sizeof(sig), sig_hex);
	sb_puts(&sb, SIGV4_ALGORITHM " Credential=");
	sb_puts(&sb, creds->access_key_id);
	sb_putc(&sb, '/');
	put_scope(&sb, sts + strlen(SIGV4_ALGORITHM "\n"), scope);
	sb_puts(&sb, ", SignedHeaders=");
	sb_puts(&sb, signed_hdrs);
	sb_puts(&sb, ", Signature=");
	sb_puts(&sb, sig_hex);
	result = sb_take(&sb);
out:
	OPENSSL_cleanse(key, sizeof(key));
	free(sts);
	free(signed_hdrs);
	return result;
}

char *sigv4_authorization(const struct sigv4_request *req,
                          const struct sigv4_scope *scope,
                          const struct sigv4_credentials *creds)
{
	return sigv4_authorization_cached(req, scope, creds, NULL);
}

/* ---- primitives --------------------------------------------------------- */

void sigv4_format_date(long long t, char out[17])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(out, AMZ_DATE_LEN + 1, "%Y%m%dT%H%M%SZ", &tm) != AMZ_DATE_LEN) {
		/* Out-of-range times cannot be signed; a fixed wrong date makes
		 * the server reject the request rather than us crash. */
		memcpy(out, "19700101T000000Z", AMZ_DATE_LEN + 1);
	}
}

int sigv4_hmac_sha256(const void *key, size_t key_len, const void *data,
                      size_t data_len, unsigned char out[32])
{
	static char digest[] = "SHA256";
	const OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC *hmac = aws_crypto_hmac();
	EVP_MAC_CTX *ctx = NULL;
	size_t out_len = 0;
	bool ok;

	if (hmac != NULL)
		ctx = EVP_MAC_CTX_new(hmac);
	ok = ctx != NULL && EVP_MAC_init(ctx, key, key_len, params) == 1 &&
	     EVP_MAC_update(ctx, data, data_len) == 1 &&
	     EVP_MAC_final(ctx, out, &out_len, 32) == 1 && out_len == 32;
	EVP_MAC_CTX_free(ctx);
	if (!ok) {
		log_error("could not compute HMAC-SHA256");
		return -1;
	}
	return 0;
}

int sigv4_signing_key(const char *secret, const char *date8, const char *region,
                      const char *service, unsigned char out[32])
{
	struct sbuf k = {0};
	unsigned char a[32];
	unsigned char b[32];
	int rc = -1;

	sb_puts(&k, "AWS4");
	sb_puts(&k, secret);
	if (k.oom || strnlen(date8, 8) != 8)
		goto out;
	if (sigv4_hmac_sha256(k.p, k.len, date8, 8, a) < 0 ||
	    sigv4_hmac_sha256(a, sizeof(a), region, strlen(region), b) < 0 ||
	    sigv4_hmac_sha256(b, sizeof(b), service, strlen(service), a) < 0 ||
	    sigv4_hmac_sha256(a, sizeof(a), "aws4_request", 12, out) < 0)
		goto out;
	rc = 0;
out:
	if (k.p != NULL)
		OPENSSL_cleanse(k.p, k.len);
	OPENSSL_cleanse(a, sizeof(a));
	OPENSSL_cleanse(b, sizeof(b));
	sb_free(&k);
	return rc;
}
