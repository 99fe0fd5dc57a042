/*
 * fuzz_artifact.c: libFuzzer harness for the price artifact parser
 * (core/price/artifact.c): the stored-artifact parser, the time parser and
 * the key classifier.
 *
 * Checked, for whatever the input is: a time that parses formats as the
 * 20-character canonical text and parses back to itself (the defect of
 * issue 11 item 6: years outside 1000..9999 formatted as ""); an artifact
 * that parses has a canonical window start and a key that classifies as an
 * artifact key; the key classifier never calls an unparseable key an
 * artifact.  A violation aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price/artifact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_artifact: invariant violated: %s\n", what);
		abort();
	}
}

static void check_time(const char *text)
{
	char out[ARTIFACT_TIME_LEN + 1];
	int64_t t, back;

	if (artifact_parse_time(text, &t) < 0) {
		require(artifact_time_problem(text) != NULL, "a refused time has a reason");
		return;
	}
	require(artifact_time_problem(text) == NULL, "an accepted time has no problem");
	artifact_format_time(t, out);
	require(strlen(out) == ARTIFACT_TIME_LEN, "an accepted time formats canonically");
	require(artifact_parse_time(out, &back) == 0 && back == t, "the canonical text parses back");
}

static void check_artifact(const char *body, size_t len)
{
	struct artifact a;
	char err[256] = "";
	const char *problem;
	char *key;

	if (artifact_parse(body, len, &a, err, sizeof(err)) < 0) {
		require(err[0] != '\0', "a refused artifact says why");
		return;
	}
	require(strlen(a.window_start_text) == ARTIFACT_TIME_LEN, "the window start is canonical");
	require(strlen(a.sha256) == ARTIFACT_SHA256_HEX_LEN, "the digest is computed");
	require(a.bars.n > 0, "an artifact has bars");
	key = artifact_make_key("prices/", a.symbol, a.window_start_text, a.sha256);
	require(key != NULL, "a key is made");
	require(artifact_key_classify("prices/", key, &problem) == ARTIFACT_KEY_ARTIFACT,
	        "a parsed artifact's key is an artifact key");
	free(key);
	artifact_free(&a);
}

static void check_key(const char *key)
{
	const char *problem = "unset";
	enum artifact_key_kind k = artifact_key_classify("prices/", key, &problem);

	require((k == ARTIFACT_KEY_UNPARSEABLE) == (problem != NULL), "a problem iff unparseable");
	require((k == ARTIFACT_KEY_ARTIFACT) == (artifact_key_is_artifact("prices/", key) != 0),
	        "classify agrees with is_artifact");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	require(s != NULL, "malloc works");
	memcpy(s, data, size);
	s[size] = '\0';
	check_artifact((const char *)data, size);
	check_time(s);
	check_key(s);
	free(s);
	return 0;
}
