// C shim over the system libssl (OpenSSL 3), GRDB-style [system] module (Linux only: the macOS
// SDK ships no OpenSSL, so Package.swift depends on this target only `.when(platforms: [.linux])`
// and Swift code guards it with `#if canImport(CTLS)`).
//
// OpenSSL exposes much of its SSL_CTX/SSL/BIO configuration as macros over *_ctrl() calls, and
// its option bits as `SSL_OP_BIT(n)` expressions; neither imports into Swift, so each one used is
// wrapped here as a `static inline` `ts_` function.
#ifndef TOUCHSYNC_CTLS_SHIM_H
#define TOUCHSYNC_CTLS_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

// MARK: protocol versions (RFC 8446, RFC 5246)

static inline int ts_tls1_2_version(void) { return TLS1_2_VERSION; }
static inline int ts_tls1_3_version(void) { return TLS1_3_VERSION; }

static inline int ts_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int ts_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

// MARK: options and modes

/// The server options: no renegotiation (RFC 5746 not needed when it is refused outright), no
/// TLS compression (CRIME), no TLS < 1.2, and the client's cipher order (Mozilla "intermediate":
/// the suites are all strong, so the client may pick the one its hardware does fastest).
static inline uint64_t ts_server_options(void) {
    return (uint64_t)(SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_NO_SSLv3
                      | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1);
}
static inline uint64_t ts_ssl_ctx_set_options(SSL_CTX *ctx, uint64_t options) {
    return (uint64_t)SSL_CTX_set_options(ctx, options);
}
static inline uint64_t ts_ssl_ctx_get_options(SSL_CTX *ctx) {
    return (uint64_t)SSL_CTX_get_options(ctx);
}
static inline uint64_t ts_op_no_renegotiation(void) { return (uint64_t)SSL_OP_NO_RENEGOTIATION; }
static inline uint64_t ts_op_no_compression(void) { return (uint64_t)SSL_OP_NO_COMPRESSION; }
static inline uint64_t ts_op_no_ticket(void) { return (uint64_t)SSL_OP_NO_TICKET; }

/// SSL_MODE_RELEASE_BUFFERS frees an idle connection's record buffers (tens of KB each).
static inline long ts_ssl_ctx_set_release_buffers(SSL_CTX *ctx) {
    return SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
}
/// Server-side session cache (for TLS 1.2 session IDs); tickets (RFC 5077 / RFC 8446 §4.6.1)
/// are independent of it and on by default.
static inline long ts_ssl_ctx_set_session_cache_server(SSL_CTX *ctx) {
    return SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
}

/// Finite-field DHE parameters matched to the certificate's strength (RFC 7919 groups).
static inline long ts_ssl_ctx_set_dh_auto(SSL_CTX *ctx) { return SSL_CTX_set_dh_auto(ctx, 1); }
/// Key-exchange groups, most preferred first (e.g. "X25519:prime256v1:secp384r1").
static inline long ts_ssl_ctx_set1_groups_list(SSL_CTX *ctx, const char *list) {
    return SSL_CTX_set1_groups_list(ctx, list);
}

// MARK: ALPN (RFC 7301)

/// Server ALPN selection: `http/1.1` when the client offers it; a client offering only other
/// protocols (e.g. h2 alone) gets no ALPN extension back (RFC 7301 §3.2 lets the server ignore
/// it; clients then speak HTTP/1.1 by default).
static int ts_alpn_select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                 const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    static const unsigned char ours[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };
    unsigned char *selected = NULL;
    unsigned char selectedLen = 0;
    if (SSL_select_next_proto(&selected, &selectedLen, ours, sizeof ours, in, inlen) == OPENSSL_NPN_NEGOTIATED) {
        *out = selected;
        *outlen = selectedLen;
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK;
}
static inline void ts_ssl_ctx_use_alpn_http11(SSL_CTX *ctx) {
    SSL_CTX_set_alpn_select_cb(ctx, ts_alpn_select_http11, NULL);
}

// MARK: BIOs

static inline long ts_bio_set_mem_eof_return(BIO *bio, int value) {
    return BIO_set_mem_eof_return(bio, value);
}
static inline size_t ts_bio_pending(BIO *bio) { return BIO_ctrl_pending(bio); }

// MARK: client side (used by tests and tools)

static inline long ts_ssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

// MARK: certificates (touchsync cert)

/// A new P-256 key (EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen).
static inline EVP_PKEY *ts_ec_p256_keygen(void) { return EVP_EC_gen("P-256"); }

static inline int ts_mbstring_asc(void) { return MBSTRING_ASC; }

/// Adds one X.509 v3 extension given in OpenSSL's config syntax (e.g. NID_subject_alt_name,
/// "DNS:localhost,IP:127.0.0.1"); `issuer` is the signing certificate (itself when self-signed),
/// needed for the authority key identifier. Returns 1 on success.
static inline int ts_x509_add_ext(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext == NULL) return 0;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

// MARK: errors

/// The oldest queued OpenSSL error as text (into `buffer`), clearing the queue; 0 when none.
static inline unsigned long ts_err_pop_string(char *buffer, size_t length) {
    unsigned long first = ERR_get_error();
    if (first != 0 && buffer != NULL && length > 0) ERR_error_string_n(first, buffer, length);
    ERR_clear_error();
    return first;
}

#endif
