/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * sign.c: Standard Webhooks secrets and signatures.
 *
 * A secret is "whsec_" followed by the key in standard base64; the
 * signature of one delivery is base64(HMAC-SHA256(key, "id.timestamp.body")),
 * sent as "v1,<signature>" in webhook-signature.  The key is never copied
 * anywhere but the one buffer wh_key_free() wipes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "webhook.h"

#define WH_SECRET_PREFIX "whsec_"
/* The specification asks for keys of 24 to 64 bytes; shorter is guessable. */
#define WH_KEY_MIN 24
#define WH_KEY_MAX 1024

static int b64_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

/* Strict standard base64 with padding: length a multiple of 4, '=' only at the end. */
static int b64_valid(const char *s, size_t n, size_t *pad)
{
	*pad = 0;
	if (n == 0 || n % 4 != 0)
		return 0;
	if (s[n - 1] == '=')
		*pad = s[n - 2] == '=' ? 2 : 1;
	for (size_t i = 0; i < n - *pad; i++) {
		if (!b64_char((unsigned char)s[i]))
			return 0;
	}
	return 1;
}

int wh_secret_decode(const char *secret, unsigned char **key, size_t *key_len,
                     char *err, size_t errlen)
{
	size_t plen = strlen(WH_SECRET_PREFIX);
	const char *b64;
	size_t n;
	size_t pad;
	unsigned char *buf;

	*key = NULL;
	*key_len = 0;
	if (strncmp(secret, WH_SECRET_PREFIX, plen) != 0) {
		snprintf(err, errlen, "the secret does not start with \"whsec_\" (a Standard Webhooks "
		         "secret is whsec_ followed by the key in base64)");
		return -1;
	}
	b64 = secret + plen;
	n = strlen(b64);
	if (!b64_valid(b64, n, &pad)) {
		snprintf(err, errlen, "the secret after \"whsec_\" is not valid base64");
		return -1;
	}
	buf = malloc(n / 4 * 3 + 1);
	if (buf == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int got = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)n);
	if (got < 0) {
		wh_key_free(buf, n / 4 * 3 + 1);
		snprintf(err, errlen, "the secret after \"whsec_\" is not valid base64");
		return -1;
	}
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	size_t len = (size_t)got - pad;
	if (len < WH_KEY_MIN || len > WH_KEY_MAX) {
		wh_key_free(buf, n / 4 * 3 + 1);
		snprintf(err, errlen, "the secret's key is %zu bytes; it must have %d to %d",
		         len, WH_KEY_MIN, WH_KEY_MAX);
		return -1;
	}
	*key = buf;
	*key_len = len;
	return 0;
}

void wh_key_free(unsigned char *key, size_t key_len)
{
	if (key == NULL)
		return;
	OPENSSL_cleanse(key, key_len);
	free(key);
}

int wh_sign(const unsigned char *key, size_t key_len, const char *content, size_t len,
            char out[WH_SIGNATURE_LEN])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;

	if (HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)content, len,
	         mac, &mac_len) == NULL)
		return -1;
	memcpy(out, "v1,", 3);
	/* 32 bytes are 44 base64 characters plus NUL: fits with room to spare. */
	EVP_EncodeBlock((unsigned char *)out + 3, mac, (int)mac_len);
	return 0;
}
