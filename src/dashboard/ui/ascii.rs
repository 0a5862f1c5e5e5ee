//! `--ascii`: the finished screen rewritten cell by cell into plain ASCII,
//! for terminals without Unicode. One pass over the buffer catches every
//! border, mark, arrow and sparkline whichever pane drew it, and every
//! replacement is one column wide, as the original, so nothing moves.
//! Focused (thick) borders stay apart from plain ones: `=` and `#` against
//! `-` and `+`.

use ratatui::buffer::Buffer;

/// Rewrites every cell of `buf` that is not ASCII.
pub fn transliterate(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        let symbol = cell.symbol();
        if symbol.is_ascii() {
            continue;
        }
        let mut chars = symbol.chars();
        let replaced = match (chars.next(), chars.next()) {
            (Some(c), None) => ascii_for(c),
            // A grapheme of several characters (accents, emoji sequences).
            _ => '?',
        };
        cell.set_char(replaced);
    }
}

/// The ASCII stand-in for `c` (`?` when there is none).
pub fn ascii_for(c: char) -> char {
    match c {
        // Plain, rounded and double borders.
        '─' | '╌' | '┄' | '┈' | '═' => '-',
        '│' | '╎' | '┆' | '┊' | '║' => '|',
        '┌' | '┐' | '└' | '┘' | '├' | '┤' | '┬' | '┴' | '┼' | '╭' | '╮' | '╰' | '╯' | '╔' | '╗'
        | '╚' | '╝' | '╠' | '╣' | '╦' | '╩' | '╬' => '+',
        // Thick borders (the focused pane).
        '━' => '=',
        '┃' => '|',
        '┏' | '┓' | '┗' | '┛' | '┣' | '┫' | '┳' | '┻' | '╋' => '#',
        // Arrows and markers.
        '→' | '▶' | '►' | '▸' | '❯' | '»' => '>',
        '←' | '◀' | '◄' | '«' => '<',
        '↑' | '▲' | '⇡' => '^',
        '↓' | '▼' | '⇣' => 'v',
        '↩' | '↪' => '~',
        '●' | '•' | '◆' | '■' | '✓' | '✔' => '*',
        '○' | '◇' | '□' => 'o',
        '⚠' => '!',
        '✗' | '✘' | '×' => 'x',
        // Punctuation.
        '…' => '~',
        '—' | '–' | '‒' | '−' => '-',
        '·' | '∙' => '.',
        '±' => '~',
        '≤' => '<',
        '≥' => '>',
        '≠' => '#',
        '‘' | '’' | '′' => '\'',
        '“' | '”' | '″' => '"',
        // Blocks: sparklines, gauges, the text cursor.
        '▁' | '▂' => '_',
        '▃' | '▄' => '-',
        '▅' | '▆' => '=',
        '▇' | '█' | '▉' | '▊' | '▋' => '#',
        '▌' | '▍' | '▎' | '▏' | '▐' => '|',
        '░' | '▒' | '▓' => '#',
        // Braille (charts) and anything else.
        c if ('\u{2800}'..='\u{28FF}').contains(&c) => '.',
        c if c.is_whitespace() => ' ',
        _ => '?',
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::widgets::{Block, BorderType, Widget};

    #[test]
    fn borders_and_marks_become_ascii_of_the_same_width() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 12, 3));
        Block::bordered()
            .border_type(BorderType::Thick)
            .title("▶ a → b…")
            .render(buf.area, &mut buf);
        transliterate(&mut buf);
        let text: String = buf.content.iter().map(|c| c.symbol()).collect();
        assert!(text.is_ascii(), "{text}");
        assert!(text.starts_with("#> a > b~==#"), "{text}");
    }
}
