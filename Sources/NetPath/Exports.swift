@_exported import NetPathConfig
@_exported import NetPathControl
@_exported import NetPathCore
@_exported import NetPathPlugin

@_exported import class NetPathLinux.NetlinkEngine
@_exported import struct NetPathLinux.NetlinkError
@_exported import struct NetPathLinux.SysfsReader
// What KernelPathSource's initialiser takes: custom classification (a builder with overrides or a
// sysfs fixture) and a namespace, and the error it throws. NetPathLinux is not a product, so a
// program could not import it to name them; the rest of that module stays out of the API.
@_exported import struct NetPathLinux.SystemStateBuilder
