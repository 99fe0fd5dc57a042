/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/hexdigest.c: lower-case hex and SHA-256 hex digests (see hexdigest.h).
 */
#include "common/hexdigest.h"

#include <openssl/evp.h>

void hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;

	if (EVP_Digest(data, len, md, &md_len, EVP_sha256(), NULL) != 1 || md_len != 32) {
		out[0] = '\0';
		return -1;
	}
	hex_encode(md, md_len, out);
	return 0;
}
