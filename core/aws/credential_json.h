/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/credential_json.h: the JSON credential document that the container
 * endpoint, IMDS and credential_process programs answer with:
 *   {"AccessKeyId": "...", "SecretAccessKey": "...", "Token": "...",
 *    "Expiration": "2026-12-01T10:00:00Z"}
 * (credential_process says "SessionToken" and adds "Version": 1; IMDS adds
 * "Code": "Success").
 */
#ifndef OUTBOX_CORE_AWS_CREDENTIAL_JSON_H
#define OUTBOX_CORE_AWS_CREDENTIAL_JSON_H

#include <stddef.h>

#include "aws/credentials.h"
#include "common/compiler.h"

/*
 * Parses body (len bytes; borrowed) into a new snapshot in *out.  The token
 * is read from "Token" or "SessionToken"; a "Version" other than 1 or a
 * "Code" other than "Success" is refused; "Expiration" is optional (no
 * expiry).  Returns 0, or -1 with the reason in err (never a value from the
 * document).
 */
int aws_creds_from_json(const char *body, size_t len, struct aws_creds **out, char *err,
                        size_t err_size) OUTBOX_MUSTCHECK;

#endif
