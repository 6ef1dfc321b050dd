"""A remote MCP server for tests: streamable HTTP over TLS, optionally behind OAuth, built on the official Python SDK.

    remote_mcp.py --certfile C --keyfile K [--oauth [--client ID:SECRET]] [--token-ttl SECONDS] [--events FILE]

Binds 127.0.0.1 on a free port and prints one line, `ready https://localhost:<port>/mcp` (plain http without
--certfile/--keyfile), once it accepts connections. Tools: echo, add, whoami.

--oauth makes it its own authorization server, with an in-memory provider: dynamic client registration, an
/authorize that approves at once (302 to the client's redirect_uri with code and state), PKCE (S256), access
tokens that expire after --token-ttl seconds (default 3600), rotating refresh tokens, /revoke, and the test-only
`POST /admin/revoke-all` (no auth) that revokes every token. --client registers a confidential client beforehand,
whose loopback redirect may use any port (RFC 8252 §7.3). --events FILE gets one JSON line per event; token
values are never written anywhere.
"""

import argparse
import asyncio
import base64
import json
import math
import secrets
import socket
import sys
import time
from urllib.parse import unquote

import uvicorn
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp.server.auth.handlers import revoke
from mcp.server.auth.middleware import client_auth
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken, construct_redirect_uri
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class RevocationRequest(revoke.RevocationRequest):
    client_secret: str | None = None  # SDK 2.3.0 requires the field even from public clients (RFC 7009 does not)


revoke.RevocationRequest = RevocationRequest


_authenticate = client_auth.ClientAuthenticator.authenticate_request


async def authenticate_request(self, request):
    # RFC 6749 §2.3.1: with HTTP Basic the client_id is in the Authorization header and need not be repeated
    # in the form; SDK 2.3.0 insists on the form's, so it is copied there from the header.
    form = await request.form()
    header = request.headers.get("Authorization", "")
    if not form.get("client_id") and header.startswith("Basic "):
        client_id = unquote(base64.b64decode(header[6:]).decode().split(":", 1)[0])
        request._form = FormData([*form.multi_items(), ("client_id", client_id)])
    return await _authenticate(self, request)


client_auth.ClientAuthenticator.authenticate_request = authenticate_request

parser = argparse.ArgumentParser()
parser.add_argument("--certfile")
parser.add_argument("--keyfile")
parser.add_argument("--oauth", action="store_true")
parser.add_argument("--token-ttl", type=int, default=3600)
parser.add_argument("--events")
parser.add_argument("--client", help="ID:SECRET, a confidential client registered beforehand")
args = parser.parse_args()
if bool(args.certfile) != bool(args.keyfile):
    parser.error("--certfile and --keyfile go together")

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
sock.listen(64)
port = sock.getsockname()[1]
tls = bool(args.certfile)
base = f"{'https' if tls else 'http'}://localhost:{port}"


def event(name: str, **fields) -> None:
    if args.events:
        with open(args.events, "a") as f:
            f.write(json.dumps({"event": name, **fields}) + "\n")


class Provider:
    """In-memory OAuthAuthorizationServerProvider that approves every authorization request."""

    def __init__(self, ttl: int):
        self.ttl = ttl
        self.clients = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}  # includes expired ones, so their use is reported as "expired"
        self.deadline: dict[str, float] = {}  # access token -> when it expires, to the sub-second
        self.refresh: dict[str, RefreshToken] = {}
        self.partner: dict[str, str] = {}  # access token <-> the refresh token issued with it
        self.revoked: dict[str, str] = {}  # token -> "access" | "refresh"

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info
        event("registered", client_id=client_info.client_id)

    async def authorize(self, client, params):
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        event("authorized", client_id=client.client_id)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        code = self.codes.get(authorization_code)
        return code if code and code.client_id == client.client_id else None

    async def exchange_authorization_code(self, client, authorization_code):
        del self.codes[authorization_code.code]
        code = authorization_code
        return self._issue(client.client_id, code.scopes, code.resource, "authorization_code")

    async def load_refresh_token(self, client, refresh_token):
        found = self.refresh.get(refresh_token)
        if found is None and refresh_token not in self.access and self.revoked.get(refresh_token) != "access":
            self._reject(refresh_token, "refresh")
        return found if found and found.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self._drop(refresh_token.token)  # rotation: a refresh token is good for one use
        return self._issue(client.client_id, scopes, refresh_token.resource, "refresh_token")

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None:
            if token not in self.refresh and self.revoked.get(token) != "refresh":  # /revoke tries both kinds
                self._reject(token, "access")
            return None
        if self.deadline[token] <= time.time():
            event("rejected", reason="expired", kind="access")
            return None
        return found

    async def revoke_token(self, token):
        partner = self.partner.get(token.token)
        self._drop(token.token)
        self._drop(partner)
        event("revoked", client_id=token.client_id)

    def revoke_all(self):
        for token in list(self.access) + list(self.refresh):
            self._drop(token)
        event("revoked-all")

    def _issue(self, client_id, scopes, resource, grant) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self.deadline[access] = time.time() + self.ttl
        expires_at = math.ceil(self.deadline[access])
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires_at, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self.partner[access], self.partner[refresh] = refresh, access
        event("token", grant=grant, client_id=client_id)
        return OAuthToken(
            access_token=access, expires_in=self.ttl, refresh_token=refresh, scope=" ".join(scopes) or None
        )

    def _drop(self, token):
        for kind, store in (("access", self.access), ("refresh", self.refresh)):
            if store.pop(token, None) is not None:
                self.revoked[token] = kind
        self.partner.pop(token, None)

    def _reject(self, token, kind):
        event("rejected", reason="revoked" if self.revoked.get(token) == kind else "unknown", kind=kind)


provider = Provider(args.token_ttl) if args.oauth else None


class LoopbackClient(OAuthClientInformationFull):
    """A registered native client: any port of its loopback redirect is accepted (RFC 8252 §7.3)."""

    def validate_redirect_uri(self, redirect_uri):
        if redirect_uri is not None and redirect_uri.host == "127.0.0.1" and redirect_uri.path == "/callback":
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


if provider and args.client:
    client_id, _, client_secret = args.client.partition(":")
    provider.clients[client_id] = LoopbackClient(
        client_id=client_id, client_secret=client_secret, redirect_uris=["http://127.0.0.1/callback"],
        token_endpoint_auth_method="client_secret_basic", grant_types=["authorization_code", "refresh_token"],
        scope="notes:read")
auth = None
if args.oauth:
    auth = AuthSettings(
        issuer_url=base,
        resource_server_url=f"{base}/mcp",
        validate_token_resource=False,
        client_registration_options=ClientRegistrationOptions(enabled=True),
        revocation_options=RevocationOptions(enabled=True),
    )
mcp = MCPServer("remote", instructions="A remote test server.", auth_server_provider=provider, auth=auth)


def caller() -> str | None:
    token = get_access_token()
    return token.client_id if token else None


@mcp.tool(description="Returns its text.", structured_output=False)
def echo(text: str) -> str:
    event("call", tool="echo", client_id=caller())
    return text


@mcp.tool(description="Adds two integers.")
def add(a: int, b: int) -> int:
    event("call", tool="add", client_id=caller())
    return a + b


@mcp.tool(description="The OAuth client id of the caller's access token, or 'anonymous'.", structured_output=False)
def whoami() -> str:
    event("call", tool="whoami", client_id=caller())
    return caller() or "anonymous"


if provider:

    @mcp.custom_route("/admin/revoke-all", methods=["POST"])
    async def revoke_all(request: Request) -> JSONResponse:
        provider.revoke_all()
        return JSONResponse({"revoked": True})


app = mcp.streamable_http_app(
    host="localhost",
    transport_security=TransportSecuritySettings(
        allowed_hosts=["127.0.0.1:*", "localhost:*"],
        allowed_origins=[f"{scheme}://{host}:*" for scheme in ("http", "https") for host in ("127.0.0.1", "localhost")],
    ),
)
config = uvicorn.Config(
    app,
    ssl_certfile=args.certfile if tls else None,
    ssl_keyfile=args.keyfile if tls else None,
    log_level="warning",
    access_log=False,
    timeout_graceful_shutdown=1,
)


async def main() -> None:
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            await serving
            sys.exit(1)
        await asyncio.sleep(0.01)
    print(f"ready {base}/mcp", flush=True)
    await serving


asyncio.run(main())
