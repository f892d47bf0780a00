package luascripts

// ServerTime returns the server's clock in milliseconds since the Unix epoch.
var ServerTime = loadReadOnly("server_time.lua")
