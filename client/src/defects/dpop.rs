//! Seam: DPoP proofs (RFC 9449). Whether a DPoP client sends proofs, and what they leave
//! out or repeat. The flags live in [`AuthDefects`](crate::seams::AuthDefects).
//!
//! Defects here: `auth-dpop-no-proof`, `auth-dpop-no-ath`, `auth-dpop-jti-reused`,
//! `auth-dpop-ignores-nonce`.

use super::Defects;
use crate::auth::dpop::Shape;

impl Defects {
    /// What a DPoP client's proofs are like; correct: sent, with `ath`, a fresh `jti` and
    /// the nonce a server asked for.
    pub(crate) fn auth_dpop_shape(&self) -> Option<Shape> {
        let d = &self.auth;
        (!d.dpop_no_proof).then_some(Shape {
            no_ath: d.dpop_no_ath,
            same_jti: d.dpop_jti_reused,
            no_nonce: d.dpop_ignores_nonce,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_defect_bends_one_part_of_the_proofs() {
        let on = |name: &str| {
            let mut d = Defects::default();
            assert!(d.enable(name));
            d
        };
        assert_eq!(Defects::default().auth_dpop_shape(), Some(Shape::default()));
        assert_eq!(on("auth-dpop-no-proof").auth_dpop_shape(), None);
        assert!(on("auth-dpop-no-ath").auth_dpop_shape().unwrap().no_ath);
        assert!(
            on("auth-dpop-jti-reused")
                .auth_dpop_shape()
                .unwrap()
                .same_jti
        );
        assert!(
            on("auth-dpop-ignores-nonce")
                .auth_dpop_shape()
                .unwrap()
                .no_nonce
        );
    }
}
