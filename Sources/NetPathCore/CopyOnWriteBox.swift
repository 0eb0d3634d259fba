/// A value kept in a box that copies share until one of them changes (copy on write): what a
/// large model type (``Interface``, ``Event``) stores in place of its fields, so that handing it
/// on is one retain, not a retain and a release of each string and array it holds.
///
/// The owner exposes each field through a `get` that reads ``value`` and a `_modify` that yields
/// `&box.value.field`, so that a change is made in place (appending to an array field copies no
/// array the box already holds) once the box is the owner's alone.
///
/// - Important: `@unchecked Sendable`: the box is written only through ``value``'s `_modify`,
///   which first makes it unique to the one value being changed, so a box that any other value,
///   and so any other thread, can see is never written.
struct CopyOnWriteBox<Value: Sendable>: @unchecked Sendable {
    /// `@exclusivity(unchecked)`: a class's stored property is checked for overlapping access at
    /// run time on every read and write (swift_beginAccess, ~40 instructions), and a link change
    /// reads its interface's and its events' values dozens of times. The check guards nothing
    /// here: the box is written only while one value owns it, through that value's `inout`
    /// access, which the compiler checks statically.
    private final class Storage {
        @exclusivity(unchecked) var value: Value

        init(_ value: Value) { self.value = value }
    }

    private var storage: Storage

    init(_ value: Value) { storage = Storage(value) }

    /// The value; changing it first copies the box when another value shares it.
    var value: Value {
        get { storage.value }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.value) }
            yield &storage.value
        }
    }

    /// A mirror of `subject`, the box's owner, that shows the values as a plain struct's fields:
    /// what `print`, `dump` and test failures showed when the owner stored them inline.
    func mirror(of subject: Any) -> Mirror {
        Mirror(subject, children: Mirror(reflecting: storage.value).children, displayStyle: .struct)
    }
}

/// Equal when the values are: at once, without reading a field, when both share one box. An
/// owner whose only stored property is its box gets this as its own synthesized `==`.
extension CopyOnWriteBox: Equatable where Value: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.storage === rhs.storage || lhs.storage.value == rhs.storage.value }
}

/// The values' hash, so that equal owners hash alike whether or not they share a box.
extension CopyOnWriteBox: Hashable where Value: Hashable {
    func hash(into hasher: inout Hasher) { storage.value.hash(into: &hasher) }
}
