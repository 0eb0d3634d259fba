// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials

/// An ``Event``'s JSON line written directly, without `Codable`: the bytes
/// `JSONCoding.lineEncoder().encode(event)` gives, at a fraction of the cost.
///
/// Every event on its way to a hook's stdin, a monitoring client of the control socket and
/// `netpathctl monitor --json` is encoded, and on a link change that was most of `monitor`'s
/// CPU and on the latency path (`JSONCoding.swift` has the numbers). This mirrors the
/// `encode(to:)` of ``Event`` and of every type it holds, field by field, with the keys in the
/// order Foundation's `.sortedKeys` puts them (``JSONWriter``): a `c.encode(optional, …)` writes
/// `null`, an `encodeIfPresent` (and a synthesized conformance's optional) leaves the key out.
///
/// Change it with those `encode(to:)`s (each says so): `EventJSONWriterTests` compares it with
/// Foundation on thousands of generated events, and fails when one of them moves alone.
package enum EventJSON {
    /// `event` as one line of JSON, without the newline; `JSONCoding.lineBytes(event)`.
    ///
    /// - Throws: `EncodingError.invalidValue` where Foundation's encoder throws: a round-trip
    ///   time or loss that is NaN or infinite.
    package static func lineBytes(_ event: Event) throws -> [UInt8] {
        var writer = JSONWriter()
        writer.bytes.reserveCapacity(1024)
        try write(event, to: &writer)
        return writer.bytes
    }

    /// Writes `event` as a JSON object.
    package static func write(_ event: Event, to w: inout JSONWriter) throws {
        w.beginObject()
        if let address = event.address {
            w.key("address")
            write(address, to: &w)
        }
        if !event.changes.isEmpty {
            w.key("changes")
            write(event.changes, to: &w)
        }
        if let connectivity = event.connectivity {
            w.key("connectivity")
            w.string(connectivity.rawValue)
        }
        w.key("event")
        w.string(event.name.rawValue)
        w.key("interface")
        w.string(event.interface)
        if let interfaceState = event.interfaceState {
            w.key("interface_state")
            try write(interfaceState, to: &w)
        }
        w.key("interface_type")
        w.string(event.interfaceType?.rawValue)
        if let path = event.path {
            w.key("path")
            try write(path, to: &w)
        }
        w.key("policy")
        w.string(event.policy)
        if let previousConnectivity = event.previousConnectivity {
            w.key("previous_connectivity")
            w.string(previousConnectivity.rawValue)
        }
        w.key("previous_interface")
        w.string(event.previousInterface)
        w.key("scope")
        w.string(event.scope.rawValue)
        w.key("startup")
        w.bool(event.startup)
        w.key("time")
        w.string(RFC3339.format(event.time))
        w.key("version")
        w.integer(Event.version)
        w.endObject()
    }

    /// An event's `path`: the coding path of an error starts there, as Foundation's does.
    static func write(_ path: NetworkPath, to w: inout JSONWriter) throws {
        typealias Key = NetworkPath.CodingKeys
        w.beginObject()
        w.key("available_interfaces")
        w.beginArray()
        for interface in path.availableInterfaces {
            w.element()
            w.string(interface.name)
        }
        w.endArray()
        w.key("connectivity")
        w.string(path.connectivity.rawValue)
        w.key("gateways")
        w.beginArray()
        for gateway in path.gateways {
            w.element()
            w.string(gateway.description)
        }
        w.endArray()
        w.key("interface_details")
        w.beginArray()
        for interface in path.availableInterfaces {
            w.element()
            write(interface, to: &w)
        }
        w.endArray()
        w.key("is_constrained")
        w.bool(path.isConstrained)
        w.key("is_expensive")
        w.bool(path.isExpensive)
        w.key("loss")
        try w.double(path.loss, at: [Event.CodingKeys.path, Key.loss])
        if let origin = path.origin {
            w.key("origin")
            w.string(origin.rawValue)
        }
        w.key("policy")
        w.string(path.policy)
        w.key("portal_url")
        w.string(path.portalURL)
        w.key("primary")
        w.string(path.primary?.name)
        w.key("primary_ipv4")
        w.string(path.primaryIPv4?.name)
        w.key("primary_ipv6")
        w.string(path.primaryIPv6?.name)
        w.key("rtt_ms")
        try w.double(path.roundTrip?.milliseconds, at: [Event.CodingKeys.path, Key.roundTrip])
        w.key("status")
        w.string(path.status.rawValue)
        w.key("supports_dns")
        w.bool(path.supportsDNS)
        w.key("supports_ipv4")
        w.bool(path.supportsIPv4)
        w.key("supports_ipv6")
        w.bool(path.supportsIPv6)
        w.key("unsatisfied_reason")
        w.string(path.unsatisfiedReason?.rawValue)
        w.endObject()
    }

    static func write(_ interface: NetworkPath.PathInterface, to w: inout JSONWriter) {
        w.beginObject()
        w.key("index")
        w.integer(interface.index)
        w.key("metered")
        w.bool(interface.isMetered)
        w.key("name")
        w.string(interface.name)
        w.key("type")
        w.string(interface.type.rawValue)
        w.endObject()
    }

    /// An event's `interface_state`: the coding path of an error starts there, as Foundation's does.
    static func write(_ interface: Interface, to w: inout JSONWriter) throws {
        typealias Key = Interface.CodingKeys
        w.beginObject()
        w.key("addresses")
        w.beginArray()
        for address in interface.addresses {
            w.element()
            write(address, to: &w)
        }
        w.endArray()
        w.key("admin_up")
        w.bool(interface.adminUp)
        w.key("carrier")
        w.bool(interface.carrier)
        w.key("classified_by")
        write(interface.classifiedBy, to: &w)
        w.key("connectivity")
        w.string(interface.connectivity.rawValue)
        if let evidence = interface.connectivityEvidence {
            w.key("connectivity_evidence")
            w.string(evidence)
        }
        w.key("constrained")
        w.bool(interface.isConstrained)
        w.key("default_routes")
        w.beginArray()
        for route in interface.defaultRoutes {
            w.element()
            write(route, to: &w)
        }
        w.endArray()
        w.key("driver")
        w.string(interface.driver)
        w.key("index")
        w.integer(interface.index)
        w.key("kind")
        w.string(interface.kind)
        w.key("loss")
        try w.double(interface.loss, at: [Event.CodingKeys.interfaceState, Key.loss])
        w.key("mac")
        w.string(interface.mac)
        w.key("metered")
        w.bool(interface.isMetered)
        w.key("metered_reason")
        w.string(interface.meteredReason.rawValue)
        w.key("mtu")
        w.integer(interface.mtu)
        w.key("name")
        w.string(interface.name)
        w.key("oper_state")
        w.string(interface.operState.rawValue)
        w.key("portal_url")
        w.string(interface.portalURL)
        w.key("rtt_ms")
        try w.double(interface.roundTrip?.milliseconds, at: [Event.CodingKeys.interfaceState, Key.roundTrip])
        w.key("type")
        w.string(interface.type.rawValue)
        w.endObject()
    }

    static func write(_ address: InterfaceAddress, to w: inout JSONWriter) {
        w.beginObject()
        w.key("address")
        w.string(address.address.description)
        if address.isDADFailed {
            w.key("dad_failed")
            w.bool(true)
        }
        if address.isDeprecated {
            w.key("deprecated")
            w.bool(true)
        }
        w.key("family")
        w.integer(address.family.rawValue)
        w.key("prefix_len")
        w.integer(address.prefixLength)
        w.key("scope")
        w.string(address.scope.rawValue)
        if address.isTentative {
            w.key("tentative")
            w.bool(true)
        }
        w.endObject()
    }

    /// The synthesized `encode(to:)`: its optional gateway is left out when `nil`, not `null`.
    static func write(_ route: DefaultRoute, to w: inout JSONWriter) {
        w.beginObject()
        w.key("family")
        w.integer(route.family.rawValue)
        if let gateway = route.gateway {
            w.key("gateway")
            w.string(gateway.description)
        }
        w.key("metric")
        w.integer(route.metric)
        w.key("table")
        w.integer(route.table)
        w.endObject()
    }

    static func write(_ strings: [String], to w: inout JSONWriter) {
        w.beginArray()
        for string in strings {
            w.element()
            w.string(string)
        }
        w.endArray()
    }
}
