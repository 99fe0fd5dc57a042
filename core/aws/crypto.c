/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/crypto.c: OpenSSL algorithms fetched once (see crypto.h).
 *
 * Two threads may fetch at once; the first to publish wins and the other
 * frees its copy, so no lock is held around a fetch.
 */
#include "aws/crypto.h"

#include <stdatomic.h>

#include "common/log.h"

static _Atomic(EVP_MAC *) hmac;
static _Atomic(EVP_MD *) md5;
static _Atomic(EVP_MD *) sha256;

EVP_MAC *aws_crypto_hmac(void)
{
	EVP_MAC *have = atomic_load_explicit(&hmac, memory_order_acquire);
	EVP_MAC *expected = NULL;

	if (have != NULL)
		return have;
	have = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (have == NULL) {
		log_error("could not load OpenSSL's HMAC implementation");
		return NULL;
	}
	if (!atomic_compare_exchange_strong_explicit(&hmac, &expected, have, memory_order_acq_rel,
	                                             memory_order_acquire)) {
		EVP_MAC_free(have);
		have = expected;
	}
	return have;
}

static const EVP_MD *digest(_Atomic(EVP_MD *) *slot, const char *name)
{
	EVP_MD *have = atomic_load_explicit(slot, memory_order_acquire);
	EVP_MD *expected = NULL;

	if (have != NULL)
		return have;
	have = EVP_MD_fetch(NULL, name, NULL);
	if (have == NULL) {
		log_error("could not load OpenSSL's %s implementation", name);
		return NULL;
	}
	if (!atomic_compare_exchange_strong_explicit(slot, &expected, have, memory_order_acq_rel,
	                                             memory_order_acquire)) {
		EVP_MD_free(have);
		have = expected;
	}
	return have;
}

const EVP_MD *aws_crypto_md5(void)
{
	return digest(&md5, "MD5");
}

const EVP_MD *aws_crypto_sha256(void)
{
	return digest(&sha256, "SHA256");
}
