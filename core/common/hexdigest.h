/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/hexdigest.h: lower-case hex encoding and the SHA-256 hex digest.
 *
 * One definition for every part that needs it: job ids (liboutbox),
 * migration checksums, artifact keys and the AWS signer.  It depends on
 * OpenSSL's libcrypto only, so that liboutbox and the price_trigger plugin
 * (neither links libcore) compile it in as a source of their own.
 */
#ifndef OUTBOX_CORE_COMMON_HEXDIGEST_H
#define OUTBOX_CORE_COMMON_HEXDIGEST_H

#include <stddef.h>

#define SHA256_HEX_LEN 64 /* without the NUL */

/* Writes the 2 * n lower-case hex digits of in[0..n) and a NUL into out. */
void hex_encode(const unsigned char *in, size_t n, char *out);

/*
 * Writes the lower-case hex SHA-256 of data[0..len) and a NUL into out.
 * Returns 0, or -1 with out set to "" when libcrypto fails (out of memory):
 * an empty digest then fails every comparison and CHECK instead of passing.
 */
int sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
