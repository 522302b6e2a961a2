"""Collection replication (type 1 publications): WebDAV collections and local folders, scanned against
a manifest per server and synced resource by resource."""
