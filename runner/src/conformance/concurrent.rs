//! Snapshots of plans that run steps at once (`together`): the order in which concurrent
//! requests reach the fake, and where the records they cause fall among each other, is the
//! scheduler's, not the case's. Such a snapshot shows its transcript's lines sorted, so it
//! stays the same from run to run; the wire checks judge what order matters.

use mcp_harness_scenarios::model::Step;

/// `text` (a rendered trial) with its transcript lines sorted when `plan` has a `together`
/// step; unchanged otherwise.
pub fn settle(text: String, plan: &[Step]) -> String {
    let concurrent = plan
        .iter()
        .any(|step| matches!(step, Step::Together { .. }));
    if !concurrent {
        return text;
    }
    let Some(at) = text.find("transcript:\n") else {
        return text;
    };
    let (head, rest) = text.split_at(at + "transcript:\n".len());
    // The transcript is the indented lines; anything after it (what a canary saw) stays.
    let end = rest
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.len() + 1)
        .sum::<usize>()
        .min(rest.len());
    let (lines, tail) = rest.split_at(end);
    let mut sorted: Vec<&str> = lines.lines().collect();
    sorted.sort_unstable();
    let mut out = format!("{head}  (sorted: the plan runs steps at once)\n");
    for line in sorted {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(tail);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plan_with_together_is_sorted() {
        let text = "outcomes:\n  b\n  a\ntranscript:\n  y\n  x\ncanary: z\n".to_owned();
        let mut plan = vec![Step::ListTools];
        assert_eq!(settle(text.clone(), &plan), text);
        plan.push(Step::Together { steps: vec![] });
        assert_eq!(
            settle(text, &plan),
            "outcomes:\n  b\n  a\ntranscript:\n  (sorted: the plan runs steps at once)\n  x\n  y\ncanary: z\n"
        );
    }
}
