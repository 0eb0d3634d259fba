# Tidies a page that swift-argument-parser's generate-manual wrote, so that `mandoc -T lint`
# finds nothing in it. Only the layout changes; every word of the page stays the generator's,
# so the page still says exactly what --help says:
#   - each sentence of a text line starts a line of its own, and text lines are wrapped at 80
#     bytes (mdoc wants both; the generator writes each help paragraph on one line);
#   - `.Nd` loses its quotes and final period (a description is not a sentence in mdoc);
#   - a `.Pp` directly before `.It` goes (mandoc skips it anyway, with a warning);
#   - ArgumentParser's implicit `help` subcommand goes, and with it `.Ar subcommand` in the
#     synopsis of a command that has no other subcommand (netpathd): --help lists neither;
#   - a SEE ALSO section naming the other pages is added at the end (SEE_ALSO, a list of
#     `name section` pairs separated by commas, given with -v).
#
# Usage: awk -v SEE_ALSO='netpath.toml 5,netpath-hooks 7' -f tidy-manual.awk PAGE PAGE > OUT
# (the page twice: the first pass counts the subcommands).

function emit_text(line,    sentence, rest, cut) {
    # A sentence ends at ". ", "? " or "! " (after an optional closing parenthesis or quote)
    # followed by a capital letter; "e.g. by" stays one sentence.
    while (match(line, /[.?!][)"']? +[A-Z]/)) {
        cut = RSTART + RLENGTH - 1
        sentence = substr(line, 1, cut - 1)
        sub(/ +$/, "", sentence)
        wrap(sentence)
        line = substr(line, cut)
    }
    wrap(line)
}

function wrap(line,    cut, i) {
    while (length(line) > 80) {
        cut = 0
        for (i = 81; i > 1; i--) {
            if (substr(line, i, 1) == " ") { cut = i; break }
        }
        if (cut == 0) break
        out(substr(line, 1, cut - 1))
        line = substr(line, cut + 1)
    }
    out(line)
}

# A text line must not start with a control character ("." or "'"): it would be read as a macro.
function out(line) {
    if (line ~ /^[.']/) line = "\\&" line
    print line
}

FNR == NR {
    if ($0 ~ /^\.It Em / && $0 != ".It Em help") subcommands++
    next
}

# Inside the implicit help subcommand's item: skip it and its nested list.
skipping {
    if ($0 ~ /^\.Bl/) depth++
    if ($0 ~ /^\.El/ && --depth == 0) skipping = 0
    next
}

$0 == ".It Em help" {
    skipping = 1
    depth = 0
    next
}

$0 == ".Ar subcommand" && subcommands == 0 { next }

/^\.Nd / {
    line = substr($0, 5)
    gsub(/^"|"$/, "", line)
    sub(/\.$/, "", line)
    print ".Nd " line
    next
}

/^\.Pp$/ {
    pending_pp = 1
    next
}

{
    if (pending_pp && $0 !~ /^\.It( |$)/) print ".Pp"
    pending_pp = 0
    if ($0 ~ /^\.\\"/) {
        print
        if (FNR == 1) print ".\\\" Reflowed by packaging/tidy-manual.awk; the words are the generator's."
        next
    }
    if ($0 ~ /^\./ || $0 == "") {
        print
        next
    }
    emit_text($0)
}

END {
    if (pending_pp) print ".Pp"
    if (SEE_ALSO != "") {
        print ".Sh SEE ALSO"
        n = split(SEE_ALSO, pages, /,/)
        for (i = 1; i <= n; i++) {
            split(pages[i], parts, / /)
            print ".Xr " parts[1] " " parts[2] (i < n ? " ," : "")
        }
    }
}
