//! A loopback OAuth 2.1 authorization server fixture (issue 19, part 1) and
//! the access-token format it issues. See `spec/oauth-fixture.md`.
//!
//! - [`jwt`]: Ed25519-signed `at+jwt` access tokens and
//!   [`verify_access_token`], for resource servers (no async runtime needed).
//! - [`fixture`]: the authorization server itself, [`Fixture`], started in
//!   process with a synchronous API.

pub mod fixture;
pub mod jwt;

pub use fixture::{
    CREDENTIAL_PARAMS, Defects, Event, Fixture, FixtureConfig, FixtureError, digest,
    run_until_signal,
};
pub use jwt::{Claims, JwkSet, JwksError, PublicJwk, TokenError, TokenSigner, verify_access_token};
