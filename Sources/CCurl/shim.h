// SPDX-License-Identifier: Apache-2.0
// libcurl for netpath-probe, plus typed wrappers for what Swift cannot import: curl_easy_setopt
// and curl_easy_getinfo are variadic.
#ifndef NETPATH_CCURL_SHIM_H
#define NETPATH_CCURL_SHIM_H

#include <curl/curl.h>

static inline CURLcode netpath_curl_set_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode netpath_curl_set_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode netpath_curl_set_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}

typedef size_t (*netpath_curl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*netpath_curl_sockopt_callback)(void *context, curl_socket_t socket, curlsocktype purpose);

static inline CURLcode netpath_curl_set_data_callback(CURL *curl, CURLoption option, netpath_curl_data_callback value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode netpath_curl_set_sockopt_callback(CURL *curl, netpath_curl_sockopt_callback value) {
    return curl_easy_setopt(curl, CURLOPT_SOCKOPTFUNCTION, value);
}

typedef int (*netpath_curl_closesocket_callback)(void *context, curl_socket_t socket);

static inline CURLcode netpath_curl_set_closesocket_callback(CURL *curl, netpath_curl_closesocket_callback value) {
    return curl_easy_setopt(curl, CURLOPT_CLOSESOCKETFUNCTION, value);
}

static inline CURLcode netpath_curl_get_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}

static inline CURLcode netpath_curl_get_offset(CURL *curl, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(curl, info, value);
}

static inline CURLcode netpath_curl_get_string(CURL *curl, CURLINFO info, char **value) {
    return curl_easy_getinfo(curl, info, value);
}

#endif
