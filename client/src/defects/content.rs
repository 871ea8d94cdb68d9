//! Seam: content as seen. How content blocks, resource contents and completions are read
//! into the caller's answer.
//!
//! Defects here: `lenient-base64`, `skip-unknown-content`, `drop-annotations`,
//! `text-content-only`, `blob-contents-dropped`, `drop-completion-total`,
//! `accept-shapeless-contents`.

use super::Defects;
use crate::content::SeenRules;

impl Defects {
    /// How content is read; correct: [`SeenRules::SPEC`].
    pub(crate) fn content_rules(&self) -> SeenRules {
        let mut rules = SeenRules::SPEC;
        rules.strict_base64 &= !self.lenient_base64;
        rules.reject_unknown &= !self.skip_unknown_content;
        rules.keep_annotations &= !self.drop_annotations;
        rules.every_block &= !self.text_content_only;
        rules.blob_contents &= !self.blob_contents_dropped;
        rules.completion_totals &= !self.drop_completion_total;
        rules.reject_shapeless &= !self.accept_shapeless_contents;
        rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flag_bends_one_rule() {
        assert_eq!(Defects::default().content_rules(), SeenRules::SPEC);
        for name in [
            "lenient-base64",
            "skip-unknown-content",
            "drop-annotations",
            "text-content-only",
            "blob-contents-dropped",
            "drop-completion-total",
            "accept-shapeless-contents",
        ] {
            assert_ne!(
                Defects::only(name).content_rules(),
                SeenRules::SPEC,
                "{name}"
            );
        }
    }
}
