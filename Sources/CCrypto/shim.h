// C shim over the platform's crypto library, GRDB-style [system] module. TSCrypto calls only the
// ts_* functions below, so the choice of library is made here, in one place:
//   - Linux: OpenSSL 3 libcrypto (libssl-dev; linked by TSCrypto's linkerSettings on Linux);
//   - Darwin: CommonCrypto from the SDK (part of libSystem: nothing to install or link).
// Every function returns 1 on success and 0 on failure (including a size that does not fit the
// underlying API's integer type).
//
// The Darwin half was written and reviewed against the macOS SDK's <CommonCrypto/CommonDigest.h>,
// <CommonCrypto/CommonHMAC.h>, <CommonCrypto/CommonKeyDerivation.h> and
// <CommonCrypto/CommonRandom.h>; it has NOT been compiled on a Mac (none was available).
#ifndef TOUCHSYNC_CCRYPTO_SHIM_H
#define TOUCHSYNC_CCRYPTO_SHIM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__APPLE__)
#include <CommonCrypto/CommonCryptor.h>
#include <CommonCrypto/CommonDigest.h>
#include <CommonCrypto/CommonHMAC.h>
#include <CommonCrypto/CommonKeyDerivation.h>
#include <CommonCrypto/CommonRandom.h>
#else
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
// ES256 (APNs provider tokens): PEM keys, EC signatures.
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/pem.h>
#endif

/// SHA-1 (FIPS 180-4) of `length` bytes at `data` into `out` (20 bytes).
static inline int ts_sha1(const void *data, size_t length, unsigned char *out) {
#if defined(__APPLE__)
    if (length > UINT32_MAX) return 0;   // CC_LONG is uint32_t
    return CC_SHA1(data, (CC_LONG)length, out) != NULL;
#else
    unsigned int written = 0;
    return EVP_Digest(data, length, out, &written, EVP_sha1(), NULL) == 1 && written == 20;
#endif
}

/// SHA-256 (FIPS 180-4) of `length` bytes at `data` into `out` (32 bytes).
static inline int ts_sha256(const void *data, size_t length, unsigned char *out) {
#if defined(__APPLE__)
    if (length > UINT32_MAX) return 0;
    return CC_SHA256(data, (CC_LONG)length, out) != NULL;
#else
    unsigned int written = 0;
    return EVP_Digest(data, length, out, &written, EVP_sha256(), NULL) == 1 && written == 32;
#endif
}

/// HMAC-SHA256 (RFC 2104) of `length` bytes at `data` under `key` into `out` (32 bytes).
/// `key` must be a valid pointer even when `keyLength` is 0.
static inline int ts_hmac_sha256(const void *key, size_t keyLength, const void *data, size_t length, unsigned char *out) {
#if defined(__APPLE__)
    CCHmac(kCCHmacAlgSHA256, key, keyLength, data, length, out);
    return 1;
#else
    unsigned int written = 0;
    if (keyLength > INT_MAX) return 0;
    return HMAC(EVP_sha256(), key, (int)keyLength, (const unsigned char *)data, length, out, &written) != NULL
        && written == 32;
#endif
}

/// HMAC-SHA256 with the key schedule done once (RFC 2104 §4, "Implementation Note"): the
/// SHA-256 states after the key's inner (`K ^ ipad`) and outer (`K ^ opad`) blocks. Each MAC then
/// copies them and hashes only the message and the inner digest: two compressions and the
/// one-shot `HMAC()`'s per-call set-up (EVP fetch, context allocation) fewer per token check.
#if defined(__APPLE__)
typedef CC_SHA256_CTX ts_sha256_state;
#else
typedef SHA256_CTX ts_sha256_state;
#endif

typedef struct {
    ts_sha256_state inner;
    ts_sha256_state outer;
} ts_hmac_sha256_key;

// The low-level SHA256_* calls are deprecated in OpenSSL 3 in favour of EVP, whose per-call
// set-up is the cost this avoids; they remain part of its API.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#endif

/// `state` after hashing one block: the 64-byte padded key `block`, each byte XORed with `pad`.
static inline int ts_sha256_state_after_key_block(ts_sha256_state *state, const unsigned char *block, unsigned char pad) {
    unsigned char padded[64];
    for (size_t i = 0; i < 64; i++) padded[i] = (unsigned char)(block[i] ^ pad);
#if defined(__APPLE__)
    int ok = CC_SHA256_Init(state) == 1 && CC_SHA256_Update(state, padded, 64) == 1;
#else
    int ok = SHA256_Init(state) == 1 && SHA256_Update(state, padded, 64) == 1;
#endif
    volatile unsigned char *wipe = padded;
    for (size_t i = 0; i < 64; i++) { wipe[i] = 0; }
    return ok;
}

/// Fills `k` for `key` (hashed first when longer than the 64-byte block, RFC 2104 §2).
/// `key` must be a valid pointer even when `keyLength` is 0.
static inline int ts_hmac_sha256_key_init(ts_hmac_sha256_key *k, const void *key, size_t keyLength) {
    unsigned char block[64];
    memset(block, 0, sizeof block);
    if (keyLength > sizeof block) {
        if (!ts_sha256(key, keyLength, block)) return 0;
    } else if (keyLength > 0) {
        memcpy(block, key, keyLength);
    }
    int ok = ts_sha256_state_after_key_block(&k->inner, block, 0x36)
          && ts_sha256_state_after_key_block(&k->outer, block, 0x5c);
    volatile unsigned char *wipe = block;
    for (size_t i = 0; i < 64; i++) { wipe[i] = 0; }
    return ok;
}

/// HMAC-SHA256 of `length` bytes at `data` under the prepared key `k` into `out` (32 bytes);
/// the same bytes as `ts_hmac_sha256` with that key.
static inline int ts_hmac_sha256_keyed(const ts_hmac_sha256_key *k, const void *data, size_t length, unsigned char *out) {
    unsigned char inner[32];
#if defined(__APPLE__)
    if (length > UINT32_MAX) return 0;
    ts_sha256_state ctx = k->inner;
    if (CC_SHA256_Update(&ctx, data, (CC_LONG)length) != 1 || CC_SHA256_Final(inner, &ctx) != 1) return 0;
    ctx = k->outer;
    return CC_SHA256_Update(&ctx, inner, 32) == 1 && CC_SHA256_Final(out, &ctx) == 1;
#else
    ts_sha256_state ctx = k->inner;
    if (SHA256_Update(&ctx, data, length) != 1 || SHA256_Final(inner, &ctx) != 1) return 0;
    ctx = k->outer;
    return SHA256_Update(&ctx, inner, 32) == 1 && SHA256_Final(out, &ctx) == 1;
#endif
}

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

/// PBKDF2-HMAC-SHA256 (RFC 8018 §5.2): `outLength` bytes into `out`. `password` and `salt` must
/// be valid pointers even when their lengths are 0.
static inline int ts_pbkdf2_hmac_sha256(const char *password, size_t passwordLength,
                                        const unsigned char *salt, size_t saltLength,
                                        unsigned int iterations, unsigned char *out, size_t outLength) {
#if defined(__APPLE__)
    return CCKeyDerivationPBKDF(kCCPBKDF2, password, passwordLength, salt, saltLength,
                                kCCPRFHmacAlgSHA256, iterations, out, outLength) == kCCSuccess;
#else
    if (passwordLength > INT_MAX || saltLength > INT_MAX || iterations > INT_MAX || outLength > INT_MAX) return 0;
    return PKCS5_PBKDF2_HMAC(password, (int)passwordLength, salt, (int)saltLength, (int)iterations,
                             EVP_sha256(), (int)outLength, out) == 1;
#endif
}

/// `length` bytes from the system's CSPRNG into `out`.
static inline int ts_random_bytes(unsigned char *out, size_t length) {
#if defined(__APPLE__)
    return CCRandomGenerateBytes(out, length) == kCCSuccess;
#else
    if (length > INT_MAX) return 0;
    return RAND_bytes(out, (int)length) == 1;
#endif
}

/// 1 when the `length` bytes at `a` and `b` are equal, in time independent of where they differ.
static inline int ts_constant_time_equal(const void *a, const void *b, size_t length) {
#if defined(__APPLE__)
    // CommonCrypto has no public constant-time compare: accumulate the XOR of every byte.
    const volatile unsigned char *x = (const volatile unsigned char *)a;
    const volatile unsigned char *y = (const volatile unsigned char *)b;
    unsigned char diff = 0;
    for (size_t i = 0; i < length; i++) diff |= (unsigned char)(x[i] ^ y[i]);
    return diff == 0;
#else
    return CRYPTO_memcmp(a, b, length) == 0;
#endif
}

/// 1 when this build can sign ES256 (OpenSSL); 0 on Darwin, where CommonCrypto has no EC
/// signing (the Security framework's SecKey would be the way; not written yet), so APNs is
/// unavailable there and says so.
static inline int ts_es256_available(void) {
#if defined(__APPLE__)
    return 0;
#else
    return 1;
#endif
}

/// An ES256 private key from PEM text (the PKCS#8 `.p8` file APNs issues): an opaque handle,
/// NULL when the text is not a P-256 EC private key. Free it with `ts_es256_key_free`.
static inline void *ts_es256_key_from_pem(const void *pem, size_t length) {
#if defined(__APPLE__)
    (void)pem; (void)length;
    return NULL;
#else
    if (length > INT_MAX) return NULL;
    BIO *bio = BIO_new_mem_buf(pem, (int)length);
    if (!bio) return NULL;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    if (!key) return NULL;
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC || EVP_PKEY_get_bits(key) != 256) {
        EVP_PKEY_free(key);
        return NULL;
    }
    return key;
#endif
}

static inline void ts_es256_key_free(void *key) {
#if !defined(__APPLE__)
    EVP_PKEY_free((EVP_PKEY *)key);
#else
    (void)key;
#endif
}

/// ES256 (RFC 7518 §3.4): ECDSA P-256 over SHA-256 of `length` bytes at `data`, written as the
/// JWS wants it, R||S (each left-padded to 32 bytes), into `out` (64 bytes).
static inline int ts_es256_sign(void *key, const void *data, size_t length, unsigned char *out) {
#if defined(__APPLE__)
    (void)key; (void)data; (void)length; (void)out;
    return 0;
#else
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx) return 0;
    unsigned char der[80];  // a DER ECDSA-Sig-Value (RFC 3279 §2.2.3) for P-256 is at most 72 bytes
    size_t derLength = sizeof der;
    int ok = 0;
    if (EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, (EVP_PKEY *)key) == 1
        && EVP_DigestSign(ctx, der, &derLength, (const unsigned char *)data, length) == 1) {
        const unsigned char *p = der;
        ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)derLength);
        if (sig) {
            const BIGNUM *r = ECDSA_SIG_get0_r(sig), *s = ECDSA_SIG_get0_s(sig);
            ok = r && s && BN_bn2binpad(r, out, 32) == 32 && BN_bn2binpad(s, out + 32, 32) == 32;
            ECDSA_SIG_free(sig);
        }
    }
    EVP_MD_CTX_free(ctx);
    return ok;
#endif
}

/// 1 when `signature` (R||S, 64 bytes) is a valid ES256 signature of `length` bytes at `data` by
/// `key`'s public half.
static inline int ts_es256_verify(void *key, const void *data, size_t length, const unsigned char *signature) {
#if defined(__APPLE__)
    (void)key; (void)data; (void)length; (void)signature;
    return 0;
#else
    ECDSA_SIG *sig = ECDSA_SIG_new();
    if (!sig) return 0;
    BIGNUM *r = BN_bin2bn(signature, 32, NULL), *s = BN_bin2bn(signature + 32, 32, NULL);
    if (!r || !s || ECDSA_SIG_set0(sig, r, s) != 1) { BN_free(r); BN_free(s); ECDSA_SIG_free(sig); return 0; }
    unsigned char *der = NULL;
    int derLength = i2d_ECDSA_SIG(sig, &der);
    ECDSA_SIG_free(sig);
    if (derLength <= 0) return 0;
    int ok = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx && EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, (EVP_PKEY *)key) == 1) {
        ok = EVP_DigestVerify(ctx, der, (size_t)derLength, (const unsigned char *)data, length) == 1;
    }
    EVP_MD_CTX_free(ctx);
    OPENSSL_free(der);
    return ok;
#endif
}

#endif
