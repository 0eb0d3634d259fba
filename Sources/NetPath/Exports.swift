@_exported import NetPathConfig
@_exported import NetPathControl
@_exported import NetPathCore
@_exported import NetPathPlugin
