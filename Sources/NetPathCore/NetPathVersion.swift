// SPDX-License-Identifier: Apache-2.0

/// netpath's version: the one place it is set.
///
/// `netpathd --version` and `netpathctl --version` print it, the agent's metrics carry it as
/// `netpath_build_info{version="…"}`, and the Makefile reads it from this file for the Debian
/// package's `Version:` (`make deb`). Change it here and nowhere else.
public enum NetPathVersion {
    /// The version, `MAJOR.MINOR.PATCH`: also a valid Debian version of a native package.
    public static let current = "0.1.0"
}
