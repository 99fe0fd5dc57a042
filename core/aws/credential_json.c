/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/credential_json.c: credentials from a JSON document (see
 * aws/credential_json.h).
 */
#include "aws/credential_json.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *str_member(const json_t *o, const char *name)
{
	const json_t *v = json_object_get(o, name);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int check_envelope(const json_t *root, char *err, size_t err_size)
{
	const json_t *version = json_object_get(root, "Version");
	const char *code = str_member(root, "Code");

	if (version != NULL && !(json_is_integer(version) && json_integer_value(version) == 1)) {
		snprintf(err, err_size, "unsupported credential document \"Version\" (only 1 is known)");
		return -1;
	}
	if (code != NULL && strcmp(code, "Success") != 0) {
		snprintf(err, err_size, "the credential document says \"Code\": \"%.64s\"", code);
		return -1;
	}
	return 0;
}

int aws_creds_from_json(const char *body, size_t len, struct aws_creds **out, char *err,
                        size_t err_size)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, 0, &jerr);
	const char *key, *secret, *token, *expiration;
	long long expires_at = 0;
	int rc = -1;

	*out = NULL;
	if (!json_is_object(root)) {
		snprintf(err, err_size, "the credential document is not a JSON object");
		goto out;
	}
	if (check_envelope(root, err, err_size) < 0)
		goto out;
	key = str_member(root, "AccessKeyId");
	secret = str_member(root, "SecretAccessKey");
	token = str_member(root, "Token");
	if (token == NULL)
		token = str_member(root, "SessionToken");
	expiration = str_member(root, "Expiration");
	if (key == NULL || key[0] == '\0' || secret == NULL || secret[0] == '\0') {
		snprintf(err, err_size, "the credential document has no \"AccessKeyId\" or \"SecretAccessKey\"");
		goto out;
	}
	if (expiration != NULL && expiration[0] != '\0' && aws_parse_iso8601(expiration, &expires_at) < 0) {
		snprintf(err, err_size, "the credential document has a malformed \"Expiration\"");
		goto out;
	}
	*out = aws_creds_new(key, secret, token, expires_at);
	if (*out == NULL) {
		snprintf(err, err_size, "out of memory");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}
