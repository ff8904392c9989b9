/// The page, its manifest and its icon, embedded in the binary: no file to install, no CDN.
enum RemotePage {
    static let response = RemoteResponse(
        status: .ok, contentType: "text/html; charset=utf-8", body: Array(html.utf8),
        headers: [
            (
                "Content-Security-Policy",
                "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"
            )
        ])
    static let manifest = RemoteResponse(
        status: .ok, contentType: "application/manifest+json", body: Array(manifestText.utf8))
    static let icon = RemoteResponse(status: .ok, contentType: "image/svg+xml", body: Array(iconText.utf8))

    static let manifestText = """
        {"name":"gong","short_name":"gong","start_url":"/","display":"standalone",\
        "background_color":"#101010","theme_color":"#101010",\
        "icons":[{"src":"/icon.svg","sizes":"any","type":"image/svg+xml"}]}
        """

    static let iconText = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#101010"/>\
        <circle cx="32" cy="32" r="19" fill="none" stroke="#d9b35b" stroke-width="5"/><circle cx="32" cy="32" r="6" fill="#d9b35b"/></svg>
        """
}
