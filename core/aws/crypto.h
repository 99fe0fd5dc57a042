/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/crypto.h: the OpenSSL algorithms the AWS client uses per request,
 * fetched once.
 *
 * OpenSSL 3 looks an algorithm up among its providers on every one-shot
 * call (EVP_Q_mac(), EVP_Digest() with EVP_md5()): a query under a lock
 * that costs about as much as the MAC of a string to sign.  These fetch
 * each algorithm at its first use and keep it until exit, as OpenSSL keeps
 * its providers; the objects are immutable and shared by every thread.  A
 * failed fetch (out of memory, a provider configuration without it) is
 * logged and tried again at the next use, so it does not last for the
 * life of the process.
 */
#ifndef OUTBOX_CORE_AWS_CRYPTO_H
#define OUTBOX_CORE_AWS_CRYPTO_H

#include <openssl/evp.h>

/* Borrowed, never freed by the caller; NULL (logged) when unavailable. */
EVP_MAC *aws_crypto_hmac(void);
const EVP_MD *aws_crypto_md5(void);
const EVP_MD *aws_crypto_sha256(void);

#endif
