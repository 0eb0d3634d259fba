// SPDX-License-Identifier: Apache-2.0

import CCurl
import CLinux
import Glibc
import NetPathCore
import NetPathProbe

/// One HTTP probe through libcurl, bound to its interface, with hard limits on everything the
/// server controls: time, header bytes, body bytes, speed, protocols, no redirects followed.
enum HTTPProbe {
    /// The most header bytes read (all header lines together); a server that sends more gets `limited`.
    static let headerLimit = 16 * 1024

    /// What the callbacks collect; libcurl hands it back as their context pointer.
    final class Transfer {
        let interface: [UInt8]
        let bodyLimit: Int
        var headerBytes = 0
        var headerOverflow = false
        var contentType: [UInt8]?
        var location: [UInt8]?
        var body: [UInt8] = []
        var truncated = false
        var bindError: Int32?
        /// What the server sent on every connection, counted by the kernel as each socket
        /// closes: bytes that libcurl read but could not take for an HTTP answer count too.
        var received: UInt64 = 0

        init(interface: [UInt8], bodyLimit: Int) {
            self.interface = interface
            self.bodyLimit = bodyLimit
        }
    }

    static func run(interface: [UInt8], uri: [UInt8], expected: [UInt8], timeoutMilliseconds: Int)
        -> ProbeWire.ProbeResultFields
    {
        guard let curl = curl_easy_init() else {
            return .init(connectivity: .unknown, evidence: Array("curl_easy_init failed".utf8))
        }
        defer { curl_easy_cleanup(curl) }
        let transfer = Transfer(interface: interface, bodyLimit: HTTPVerdict.bodyLimit(expected: expected))
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let url = String(decoding: uri, as: UTF8.self)

        let code: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { errors in
            var setup = CURLE_OK
            func set(_ result: CURLcode) { if setup == CURLE_OK { setup = result } }
            set(netpath_curl_set_string(curl, CURLOPT_URL, url))
            set(netpath_curl_set_pointer(curl, CURLOPT_ERRORBUFFER, errors.baseAddress))
            // Only http and https, also for a redirect's target (which is never followed anyway).
            set(netpath_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "http,https"))
            set(netpath_curl_set_string(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
            set(netpath_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0))
            set(netpath_curl_set_long(curl, CURLOPT_MAXREDIRS, 0))
            // No proxy from the environment (it is empty anyway), no connection reuse, no cookies.
            set(netpath_curl_set_string(curl, CURLOPT_PROXY, ""))
            set(netpath_curl_set_long(curl, CURLOPT_FORBID_REUSE, 1))
            set(netpath_curl_set_long(curl, CURLOPT_FRESH_CONNECT, 1))
            set(netpath_curl_set_long(curl, CURLOPT_NOSIGNAL, 1))
            set(netpath_curl_set_long(curl, CURLOPT_DNS_CACHE_TIMEOUT, 0))
            set(netpath_curl_set_string(curl, CURLOPT_USERAGENT, "netpath-probe/1"))
            // Time: all of it, the connection, and a stalled transfer (a byte a minute).
            set(netpath_curl_set_long(curl, CURLOPT_TIMEOUT_MS, timeoutMilliseconds))
            set(netpath_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, timeoutMilliseconds))
            set(netpath_curl_set_long(curl, CURLOPT_LOW_SPEED_LIMIT, 16))
            set(netpath_curl_set_long(curl, CURLOPT_LOW_SPEED_TIME, max(1, timeoutMilliseconds / 2000)))
            // Small buffers: this is a probe, and it bounds what one callback hands over.
            set(netpath_curl_set_long(curl, CURLOPT_BUFFERSIZE, 4096))
            // No Accept-Encoding: no decompression, so the body limit is the bytes on the wire.
            set(netpath_curl_set_pointer(curl, CURLOPT_HEADERDATA, context))
            set(netpath_curl_set_data_callback(curl, CURLOPT_HEADERFUNCTION, headerCallback))
            set(netpath_curl_set_pointer(curl, CURLOPT_WRITEDATA, context))
            set(netpath_curl_set_data_callback(curl, CURLOPT_WRITEFUNCTION, bodyCallback))
            // SO_BINDTODEVICE by hand rather than CURLOPT_INTERFACE "if!NAME": where the option
            // fails, libcurl 7.88 goes on and binds the interface's address instead, and the
            // probe would then follow the routing table, not the link. Here it fails.
            set(netpath_curl_set_pointer(curl, CURLOPT_SOCKOPTDATA, context))
            set(netpath_curl_set_sockopt_callback(curl, sockoptCallback))
            set(netpath_curl_set_pointer(curl, CURLOPT_CLOSESOCKETDATA, context))
            set(netpath_curl_set_closesocket_callback(curl, closeSocketCallback))
            guard setup == CURLE_OK else { return setup }
            return curl_easy_perform(curl)
        }
        let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var status = 0
        curl_get_long(curl, CURLINFO_RESPONSE_CODE, &status)
        let rtt = roundTrip(curl)
        let answered = status > 0
        // Bytes arrived that libcurl could not take for an HTTP answer (HTTP/0.9, an unknown
        // version, a status code it rejects, a cut status line, TLS where plain HTTP was asked
        // for, a TLS handshake that failed): the server answered, just not usably.
        let garbled = !answered && transfer.received > 0

        func result(_ state: Connectivity, _ evidence: String, portal: [UInt8]? = nil) -> ProbeWire.ProbeResultFields {
            let lost = !answered && !(garbled && state != .none)
            return ProbeWire.ProbeResultFields(
                connectivity: state,
                roundTripMicroseconds: rtt,
                lossPartsPerMillion: state == .unknown ? nil : (lost ? 1_000_000 : 0),
                portalURL: portal,
                evidence: Array(evidence.utf8)
            )
        }
        if let bindError = transfer.bindError {
            return result(.unknown, "SO_BINDTODEVICE: \(String(cString: strerror(bindError)))")
        }
        if transfer.headerOverflow {
            return result(
                .limited,
                "HTTP \(status > 0 ? String(status) : "answer") with more than \(headerLimit) bytes of headers"
            )
        }
        let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_OK:
            break
        case CURLE_WRITE_ERROR where transfer.truncated:
            break  // The body went past what the rule needs: decide on what was read.
        case CURLE_COULDNT_RESOLVE_HOST:
            return result(.limited, "DNS: \(reason)")
        case CURLE_OPERATION_TIMEDOUT where !answered && detail.hasPrefix("Resolving timed out"):
            // The name did not resolve in time: DNS fails, as for an unknown name.
            return result(.limited, "DNS: \(reason)")
        case CURLE_OPERATION_TIMEDOUT where !answered:
            // Nothing usable within the timeout, whatever trickled in: the table's `none`.
            return result(.none, reason)
        case CURLE_URL_MALFORMAT, CURLE_FAILED_INIT, CURLE_OUT_OF_MEMORY, CURLE_UNKNOWN_OPTION, CURLE_NOT_BUILT_IN:
            // This host's own failure (the URI, libcurl), not the network's answer: no verdict.
            return result(.unknown, "curl: \(reason)")
        case CURLE_UNSUPPORTED_PROTOCOL where transfer.received == 0:
            // libcurl also says this for HTTP/0.9 and odd status lines, but only after bytes arrived.
            return result(.unknown, "curl: \(reason)")
        default:
            if answered { return result(.limited, "HTTP \(status), then: \(reason)") }
            if garbled {
                return result(.limited, "no HTTP answer in the \(transfer.received) bytes that arrived: \(reason)")
            }
            return result(.none, reason)
        }
        let answer = HTTPVerdict.Answer(
            status: status,
            contentType: transfer.contentType,
            location: redirectURL(curl) ?? transfer.location,
            body: transfer.body,
            truncated: transfer.truncated
        )
        let (state, portal, evidence) = HTTPVerdict.classify(answer, url: uri, expected: expected)
        return result(state, evidence, portal: portal)
    }

    /// The TCP handshake's time (connect minus name lookup): one round trip.
    private static func roundTrip(_ curl: UnsafeMutableRawPointer) -> UInt64? {
        var connect: curl_off_t = 0
        var lookup: curl_off_t = 0
        guard netpath_curl_get_offset(curl, CURLINFO_CONNECT_TIME_T, &connect) == CURLE_OK, connect > 0 else {
            return nil
        }
        _ = netpath_curl_get_offset(curl, CURLINFO_NAMELOOKUP_TIME_T, &lookup)
        return UInt64(max(0, connect - lookup))
    }

    /// libcurl's absolute form of the Location (relative ones resolved against the URL).
    private static func redirectURL(_ curl: UnsafeMutableRawPointer) -> [UInt8]? {
        var pointer: UnsafeMutablePointer<CChar>?
        guard netpath_curl_get_string(curl, CURLINFO_REDIRECT_URL, &pointer) == CURLE_OK, let pointer else {
            return nil
        }
        return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
    }

    private static func curl_get_long(_ curl: UnsafeMutableRawPointer, _ info: CURLINFO, _ value: inout Int) {
        var long = 0
        if netpath_curl_get_long(curl, info, &long) == CURLE_OK { value = long }
    }
}

/// One header line (libcurl hands them over whole, including the status lines of interim and
/// final responses). Returning less than was given aborts the transfer.
private let headerCallback: netpath_curl_data_callback = { data, size, count, context in
    let transfer = Unmanaged<HTTPProbe.Transfer>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    transfer.headerBytes += length
    guard transfer.headerBytes <= HTTPProbe.headerLimit else {
        transfer.headerOverflow = true
        return 0
    }
    let line = UnsafeRawBufferPointer(start: data, count: length).bindMemory(to: UInt8.self)
    var bytes = Array(line)
    while let last = bytes.last, last == 0x0d || last == 0x0a { bytes.removeLast() }
    if bytes.starts(with: Array("HTTP/".utf8)) {
        // A new response (after a 100 Continue, say): its headers are the ones that count.
        transfer.contentType = nil
        transfer.location = nil
    } else if let value = headerValue(bytes, "content-type") {
        transfer.contentType = value
    } else if let value = headerValue(bytes, "location") {
        transfer.location = value
    }
    return length
}

private func headerValue(_ line: [UInt8], _ name: String) -> [UInt8]? {
    let name = Array(name.utf8)
    guard line.count > name.count, line[name.count] == UInt8(ascii: ":") else { return nil }
    for (a, b) in zip(line, name) where a | 0x20 != b { return nil }
    return Array(line[(name.count + 1)...].drop { $0 == 0x20 || $0 == 0x09 })
}

/// Body bytes: kept up to the rule's limit, then the transfer is aborted.
private let bodyCallback: netpath_curl_data_callback = { data, size, count, context in
    let transfer = Unmanaged<HTTPProbe.Transfer>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    let room = transfer.bodyLimit - transfer.body.count
    let chunk = UnsafeRawBufferPointer(start: data, count: length).bindMemory(to: UInt8.self)
    transfer.body += chunk.prefix(max(0, room))
    guard length <= room else {
        transfer.truncated = true
        return 0
    }
    return length
}

/// Counts what the server sent on each connection before libcurl closes it.
private let closeSocketCallback: netpath_curl_closesocket_callback = { context, socket in
    let transfer = Unmanaged<HTTPProbe.Transfer>.fromOpaque(context!).takeUnretainedValue()
    var bytes: UInt64 = 0
    if np_tcp_bytes_received(socket, &bytes) == 0 {
        // The kernel counts the server's FIN as a byte received: a connection closed without a
        // byte would otherwise count as an answer.
        if bytes > 0 && peerClosed(socket) { bytes -= 1 }
        transfer.received += bytes
    }
    return close(socket)
}

/// Whether the server closed its side (its FIN arrived): the TCP states after a FIN received.
private func peerClosed(_ socket: Int32) -> Bool {
    var info = tcp_info()
    var length = socklen_t(MemoryLayout<tcp_info>.size)
    guard getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return false }
    let state = Int(info.tcpi_state)
    return state == Int(TCP_CLOSE_WAIT) || state == Int(TCP_LAST_ACK) || state == Int(TCP_CLOSING)
}

/// Binds each socket libcurl opens to the interface before it connects.
private let sockoptCallback: netpath_curl_sockopt_callback = { context, socket, _ in
    let transfer = Unmanaged<HTTPProbe.Transfer>.fromOpaque(context!).takeUnretainedValue()
    let result = transfer.interface.withUnsafeBufferPointer {
        setsockopt(socket, SOL_SOCKET, SO_BINDTODEVICE, $0.baseAddress, socklen_t($0.count))
    }
    guard result == 0 else {
        transfer.bindError = errno
        return CURL_SOCKOPT_ERROR
    }
    return CURL_SOCKOPT_OK
}
