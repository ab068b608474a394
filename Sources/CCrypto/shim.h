// C shim over the system libcrypto (OpenSSL 3), GRDB-style [system] module.
// Everything TSCrypto needs is a plain (non-variadic, non-macro) function, so the shim only
// gathers the headers; `ts_` helpers are added here when a macro needs wrapping.
#ifndef TOUCHSYNC_CCRYPTO_SHIM_H
#define TOUCHSYNC_CCRYPTO_SHIM_H

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
// ES256 (APNs provider tokens, TSAPNs): PEM keys, EC signatures.
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>

/// EVP_MAX_MD_SIZE is a macro; exposed as a function for Swift buffer sizing.
static inline int ts_evp_max_md_size(void) {
    return EVP_MAX_MD_SIZE;
}

#endif
