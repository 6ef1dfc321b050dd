#!/usr/bin/env python3
# The "system browser" the app opens for a sign-in during the end-to-end tests ($BROWSER, set by scripts/e2e):
# it does what a person's browser does with the authorization address of the test server
# (crates/connectors/tests/servers/remote_mcp.py), which approves at once: follow its redirect to the app's
# loopback address. The test's CA ($E2E_CA_FILE) is trusted; each visit is noted in $E2E_OUT/browser.log.
import http.client, os, ssl, sys, urllib.parse, urllib.request

address = sys.argv[1]
at = urllib.parse.urlsplit(address)
web = http.client.HTTPSConnection(at.hostname, at.port, context=ssl.create_default_context(cafile=os.environ["E2E_CA_FILE"]))
web.request("GET", f"{at.path}?{at.query}")
back = web.getresponse().getheader("location")
page = urllib.request.urlopen(back).read().decode()
with open(os.path.join(os.environ["E2E_OUT"], "browser.log"), "a") as log:
    log.write(f"{at.scheme}://{at.netloc}{at.path} -> {page}\n")
