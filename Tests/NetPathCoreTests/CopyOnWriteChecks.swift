import Testing

/// What a model type that keeps its values in a ``CopyOnWriteBox`` (`Interface`, `Event`) must
/// still show: it behaves as a plain value, property by property and across tasks.
enum CopyOnWriteChecks {
    /// Each change, made to a copy of `original`, leaves `original` as it was and makes the copy
    /// unequal to it; the changed copy, copied and changed again with `again`, stays as it was.
    static func changingACopyLeavesTheOriginal<Value: Equatable>(
        _ original: Value,
        _ changes: [(String, (inout Value) -> Void)],
        again: (inout Value) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (property, change) in changes {
            let before = original
            var copy = before
            change(&copy)
            #expect(before == original, "changing \(property) of a copy changed the original", sourceLocation: sourceLocation)
            #expect(copy != before, "\(property): a changed copy still equals the original", sourceLocation: sourceLocation)
            let snapshot = copy
            again(&copy)
            #expect(snapshot != copy, "\(property): a second change leaked", sourceLocation: sourceLocation)
        }
    }

    /// Eight tasks each change their own copy of `shared` a thousand times with `set`; each ends
    /// with its own last change, and `shared` stays as it was.
    static func tasksKeepTheirChanges<Value: Equatable & Sendable>(
        _ shared: Value,
        set: @escaping @Sendable (inout Value, String) -> Void,
        read: @escaping @Sendable (Value) -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let values = await withTaskGroup(of: String.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mine = shared
                    for step in 0..<1_000 { set(&mine, "if\(task)-\(step)") }
                    return read(mine)
                }
            }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(values == Set((0..<8).map { "if\($0)-999" }), sourceLocation: sourceLocation)
        #expect(read(shared) != "if0-999", sourceLocation: sourceLocation)
    }
}
