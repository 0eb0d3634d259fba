// SPDX-License-Identifier: Apache-2.0

/// "Did you mean …?" for misspelt keys and names.
enum Suggestion {
    /// The candidate closest to `word` by edit distance, if it is close enough to be a typo:
    /// at most one edit per three characters (and at least one), and never the whole word.
    static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        let limit = max(1, word.count / 3)
        var best: (String, Int)?
        for candidate in candidates {
            let d = distance(word.lowercased(), candidate.lowercased())
            if d <= limit && d < word.count && d < (best?.1 ?? .max) { best = (candidate, d) }
        }
        return best?.0
    }

    /// `; did you mean "x"?` or the empty string.
    static func clause(for word: String, in candidates: some Sequence<String>) -> String {
        closest(to: word, in: candidates).map { "; did you mean \(TOMLValue.quoted($0))?" } ?? ""
    }

    /// The Damerau–Levenshtein (optimal string alignment) distance: a swap of two neighbours
    /// counts as one edit, as in `hook_timoeut`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
