//! Reading and steering the dashboard on the tmux screen: filtering the
//! transaction table, and cutting out the text of one pane.

use crate::tmux::Tmux;

/// Types `/`, the text, Enter, and waits until the table is filtered to it
/// (and the typing cursor after the text is gone: the header's sparklines
/// draw the same block, so only the cursor's place is looked at).
pub(crate) fn filter_to(tui: &Tmux, text: &str) {
    tui.keys(&["/"]);
    tui.type_text(text);
    tui.keys(&["Enter"]);
    let title = format!("· /{text} ");
    tui.wait_for(&format!("the table filtered to {text:?}"), |s| {
        s.contains(&title) && !s.contains(&format!("{text}█"))
    });
}

/// The text inside the pane whose top border starts with `┌ <title>`, one
/// line per row, or `None` when no such pane is on the screen (tmux renders
/// the box-drawing characters one column wide, so characters are columns).
pub(crate) fn pane(screen: &str, title: &str) -> Option<String> {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let head: Vec<char> = format!("┌ {title}").chars().collect();
    let (top, left) = lines.iter().enumerate().find_map(|(i, l)| {
        l.windows(head.len())
            .position(|w| w == head.as_slice())
            .map(|c| (i, c))
    })?;
    let right = (left + 1..lines[top].len()).find(|&c| lines[top][c] == '┐')?;
    let rows: Vec<String> = lines[top + 1..]
        .iter()
        .take_while(|l| l.get(left) == Some(&'│'))
        .map(|l| l[left + 1..right.min(l.len())].iter().collect())
        .collect();
    Some(rows.join("\n"))
}
