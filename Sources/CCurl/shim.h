// C shim over the system libcurl (Debian: libcurl4-openssl-dev, built with nghttp2 for HTTP/2;
// macOS: the SDK's libcurl), GRDB-style [system] module. curl_easy_setopt and
// curl_easy_getinfo are variadic, which Swift cannot call: each use is one typed `ts_` wrapper.
#ifndef TOUCHSYNC_CCURL_SHIM_H
#define TOUCHSYNC_CCURL_SHIM_H

#include <curl/curl.h>

typedef size_t (*ts_curl_data_callback)(char *data, size_t size, size_t count, void *userdata);

static inline CURLcode ts_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode ts_curl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode ts_curl_setopt_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode ts_curl_setopt_slist(CURL *curl, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode ts_curl_setopt_callback(CURL *curl, CURLoption option, ts_curl_data_callback value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode ts_curl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}

/// Whether this libcurl speaks HTTP/2 (CURL_VERSION_HTTP2 in its feature bits).
static inline int ts_curl_has_http2(void) {
    return (curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_HTTP2) != 0;
}

#endif
