//! A loopback OAuth 2.1 authorization server fixture (issue 19, part 1) and
//! the access-token format it issues. See `spec/oauth-fixture.md`.
//!
//! - [`jwt`]: Ed25519-signed `at+jwt` access tokens and
//!   [`verify_access_token`], for resource servers (no async runtime needed).

pub mod jwt;

pub use jwt::{Claims, JwkSet, JwksError, PublicJwk, TokenError, TokenSigner, verify_access_token};
