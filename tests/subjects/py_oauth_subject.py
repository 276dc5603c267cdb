"""An OAuth-protected MCP resource server built on the Python `mcp` SDK's own
authorization support (the package pinned in .ci/run), used as a third-party
subject of `mcpres oauth run`:

    python py_oauth_subject.py --port PORT --issuer ISSUER [--scope mcp]

It serves Streamable HTTP at http://127.0.0.1:PORT/mcp and is a resource
server only: its authorization server is ISSUER (the mcpres loopback
fixture). Everything authorization-related is the SDK's:

  AuthSettings    issuer_url = ISSUER, resource_server_url = this server's
                  own /mcp URL (RFC 8707 resource identifier), required
                  scopes = [--scope], validate_token_resource = True (the SDK
                  then refuses a token whose resource is not this server);
                  the SDK serves the RFC 9728 metadata at
                  /.well-known/oauth-protected-resource/mcp and answers
                  refusals with its own 401/403 and WWW-Authenticate.
  TokenVerifier   JwksTokenVerifier below, the SDK's extension point: it
                  verifies a JWT access token with the issuer's public keys
                  (PyJWT, an SDK dependency): EdDSA only, the `typ` at+jwt
                  (RFC 9068), the signature, `iss` = ISSUER, `aud` = this
                  resource, `exp` in the future. Any failure is `None`, the
                  only refusal the SDK's verifier protocol can express.

The issuer's RFC 8414 metadata and its JWKS are read once at start-up, from
loopback only (a non-loopback issuer or jwks_uri is refused, and no proxy is
used). Nothing here logs a token or a claim value.
"""

import argparse
import ipaddress
import json
import sys
import urllib.parse
import urllib.request

import jwt
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer


def loopback_url(url: str) -> str:
    """`url` when it is http:// on a loopback IP literal; otherwise exit 2."""
    parts = urllib.parse.urlsplit(url)
    try:
        loopback = parts.scheme == "http" and ipaddress.ip_address(parts.hostname or "").is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        print(f"refusing a non-loopback URL: {url}", file=sys.stderr)
        raise SystemExit(2)
    return url


def fetch_json(url: str) -> dict:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(loopback_url(url), timeout=5) as resp:
        return json.load(resp)


class JwksTokenVerifier:
    """The SDK's `TokenVerifier` protocol over the issuer's JWKS."""

    def __init__(self, issuer: str, resource: str):
        self.issuer = issuer
        self.resource = resource
        metadata = fetch_json(f"{issuer}/.well-known/oauth-authorization-server")
        if metadata.get("issuer") != issuer:
            print("the authorization server metadata names another issuer", file=sys.stderr)
            raise SystemExit(2)
        jwks = fetch_json(metadata["jwks_uri"])
        self.keys = {k["kid"]: jwt.PyJWK.from_dict(k) for k in jwks.get("keys", []) if "kid" in k}

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            header = jwt.get_unverified_header(token)
            if header.get("alg") != "EdDSA" or header.get("typ") != "at+jwt":
                return None
            key = self.keys.get(header.get("kid"))
            if key is None:
                return None
            claims = jwt.decode(
                token,
                key=key,
                algorithms=["EdDSA"],
                audience=self.resource,
                issuer=self.issuer,
                options={"require": ["exp", "iss", "aud", "client_id"]},
            )
        except (jwt.PyJWTError, ValueError, TypeError):
            return None
        aud = claims["aud"]
        return AccessToken(
            token=token,
            client_id=str(claims["client_id"]),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=int(claims["exp"]),
            resource=aud if isinstance(aud, str) else self.resource,
            subject=claims.get("sub"),
            claims={"iss": claims["iss"]},
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--scope", default="mcp")
    args = parser.parse_args()
    issuer = loopback_url(args.issuer.rstrip("/"))
    resource = f"http://127.0.0.1:{args.port}/mcp"
    server = MCPServer(
        "mcpres-py-oauth",
        version="0.1.0",
        token_verifier=JwksTokenVerifier(issuer, resource),
        auth=AuthSettings(
            issuer_url=issuer,
            resource_server_url=resource,
            required_scopes=[args.scope],
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    server.run(transport="streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
