//! The thin layer over jsonc-parser's CST that every planner uses: which dialect is accepted,
//! byte-order marks, the top-level object, unique keys, and turning a node into a line and column
//! for shape errors.
//!
//! The CST keeps every comment and whitespace run, so a file that is parsed and rendered without
//! edits comes back byte for byte; everything here relies on that and only ever edits nodes in place.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{
    CstContainerNode, CstLeafNode, CstNode, CstObject, CstObjectProp, CstRootNode,
};

use crate::edit::{ParseError, ParseErrorKind};

const BYTE_ORDER_MARK: char = '\u{feff}';

/// JSON plus comments and trailing commas, which is what these files hold in practice.
///
/// jsonc-parser's default also accepts single quotes, hex numbers, bare keys and missing commas;
/// the hosts do not, and editing such a file would bless a file the host then refuses to load.
pub(crate) fn parse_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// A parsed settings file. Holds the root for as long as any node is in use, because the CST's
/// parent links are weak and panic once the root is gone.
pub(crate) struct Document<'a> {
    /// The text without its byte-order mark, which is what the CST's positions refer to.
    text: &'a str,
    has_byte_order_mark: bool,
    root: CstRootNode,
}

impl<'a> Document<'a> {
    pub(crate) fn parse(text: &'a str) -> Result<Self, ParseError> {
        // jsonc-parser rejects a byte-order mark, which Windows editors like to write.
        let (text, has_byte_order_mark) = match text.strip_prefix(BYTE_ORDER_MARK) {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let root = CstRootNode::parse(text, &parse_options()).map_err(|err| ParseError {
            line: err.line_display(),
            column: err.column_display(),
            message: syntax_message(&err),
            kind: ParseErrorKind::Syntax,
        })?;
        Ok(Document {
            text,
            has_byte_order_mark,
            root,
        })
    }

    /// The top-level object, or `None` for a file holding no value (empty, blank, only comments).
    pub(crate) fn existing_root_object(&self) -> Result<Option<CstObject>, ParseError> {
        match self.root.value() {
            None => Ok(None),
            Some(CstNode::Container(CstContainerNode::Object(object))) => Ok(Some(object)),
            Some(other) => Err(self.shape_error(
                &other,
                format!(
                    "the file must hold a JSON object, but it holds {}",
                    describe(&other)
                ),
            )),
        }
    }

    /// The top-level object, created as `{}` when the file holds no value.
    ///
    /// Call only after [`Document::existing_root_object`] accepted the file, since this cannot fail.
    pub(crate) fn root_object_or_create(&self) -> CstObject {
        self.root.object_value_or_set()
    }

    pub(crate) fn render(&self) -> String {
        let body = self.root.to_string();
        if self.has_byte_order_mark {
            format!("{BYTE_ORDER_MARK}{body}")
        } else {
            body
        }
    }

    /// The property `name` of `object`, or an error when the key appears more than once.
    ///
    /// JSON.parse keeps the last duplicate and the CST finds the first, so editing either one could
    /// silently have no effect; the user has to decide which one they meant.
    pub(crate) fn unique_property(
        &self,
        object: &CstObject,
        name: &str,
        path: &str,
    ) -> Result<Option<CstObjectProp>, ParseError> {
        let mut found = properties_named(object, name);
        match found.len() {
            0 => Ok(None),
            1 => Ok(found.pop()),
            _ => Err(self.shape_error(
                &found[1].clone().into(),
                format!("`{path}` appears more than once; keep one of them"),
            )),
        }
    }

    /// The top-level property `key` of `root` and its value, which must be an object; None when
    /// the key is missing or has no value.
    pub(crate) fn object_property(
        &self,
        root: &CstObject,
        key: &str,
    ) -> Result<Option<(CstObjectProp, CstObject)>, ParseError> {
        let Some(prop) = self.unique_property(root, key, key)? else {
            return Ok(None);
        };
        let Some(value) = prop.value() else {
            return Ok(None);
        };
        match value.as_object() {
            Some(object) => Ok(Some((prop, object))),
            None => {
                let message = format!("`{key}` must be an object, but it is {}", describe(&value));
                Err(self.shape_error(&value, message))
            }
        }
    }

    /// An error about `node`, positioned at the node's first character.
    pub(crate) fn shape_error(&self, node: &CstNode, message: String) -> ParseError {
        let (line, column) = line_and_column(self.text, offset_of(node));
        ParseError {
            line,
            column,
            message,
            kind: ParseErrorKind::Shape,
        }
    }
}

fn syntax_message(err: &jsonc_parser::errors::ParseError) -> String {
    use jsonc_parser::errors::ParseErrorKind as Kind;
    let message = err.kind().to_string();
    match err.kind() {
        // Accepting these is what jsonc-parser does by default; say why they are refused here.
        Kind::SingleQuotedStringsNotAllowed
        | Kind::HexadecimalNumbersNotAllowed
        | Kind::UnaryPlusNumbersNotAllowed
        | Kind::BareDecimalPointNumbersNotAllowed
        | Kind::NonFiniteNumbersNotAllowed
        | Kind::ExpectedStringObjectProperty => {
            format!("{message} (settings files are JSON with comments, not JSON5)")
        }
        _ => message,
    }
}

/// Every property of `object` whose decoded name is `name`, in document order.
pub(crate) fn properties_named(object: &CstObject, name: &str) -> Vec<CstObjectProp> {
    object
        .properties()
        .into_iter()
        .filter(|prop| prop.decoded_name().as_deref() == Some(name))
        .collect()
}

/// The decoded string a node holds, if it is a string literal.
pub(crate) fn string_value(node: &CstNode) -> Option<String> {
    match node {
        CstNode::Leaf(CstLeafNode::StringLit(lit)) => lit.decoded_value().ok(),
        _ => None,
    }
}

/// The first property `name` of `object` holding a string, decoded.
pub(crate) fn string_property(object: &CstObject, name: &str) -> Option<String> {
    string_value(&object.get(name)?.value()?)
}

/// Whether removing `node` with the CST's `remove()` would take a comment along that is not part
/// of `owned`, a node inside it that is ours to drop with everything in it.
///
/// Besides the node itself the CST's removal takes the rest of its line: comments just before it
/// and after it (up to and past its comma). A container that only looks empty once our entries are
/// gone must stay when it would take the user's comments with it.
pub(crate) fn removal_drops_comments_outside(node: &CstNode, owned: &CstNode) -> bool {
    let on_same_line_before = node
        .previous_siblings()
        .take_while(|n| n.is_trivia() && !n.is_newline())
        .any(|n| n.is_comment());
    let on_same_line_after = node
        .next_siblings()
        .take_while(|n| !n.is_newline() && (n.is_trivia() || n.is_comma()))
        .any(|n| n.is_comment());
    on_same_line_before || on_same_line_after || count_comments(node) > count_comments(owned)
}

fn count_comments(node: &CstNode) -> usize {
    match node {
        CstNode::Leaf(leaf) => usize::from(matches!(leaf, CstLeafNode::Comment(_))),
        CstNode::Container(container) => container.children().iter().map(count_comments).sum(),
    }
}

/// "an array", "a string", ... for messages about a value of the wrong type.
pub(crate) fn describe(node: &CstNode) -> &'static str {
    match node {
        CstNode::Container(CstContainerNode::Object(_)) => "an object",
        CstNode::Container(CstContainerNode::Array(_)) => "an array",
        CstNode::Leaf(CstLeafNode::StringLit(_)) => "a string",
        CstNode::Leaf(CstLeafNode::NumberLit(_)) => "a number",
        CstNode::Leaf(CstLeafNode::BooleanLit(_)) => "a boolean",
        CstNode::Leaf(CstLeafNode::NullKeyword(_)) => "null",
        _ => "something else",
    }
}

/// Byte offset of `node` in the rendered document: the length of everything rendered before it.
///
/// The CST does not keep source ranges, but until the first edit its rendering is the source.
fn offset_of(node: &CstNode) -> usize {
    let mut offset = 0;
    let mut current = node.clone();
    loop {
        offset += current
            .previous_siblings()
            .map(|sibling| sibling.to_string().len())
            .sum::<usize>();
        match current.parent() {
            Some(parent) => current = parent.into(),
            None => return offset,
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
///
/// Counts a lone `\r` as a line break too, as jsonc-parser does for its own syntax errors.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let (mut line, mut column) = (1, 1);
    let mut chars = before.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' || (c == '\r' && chars.peek() != Some(&'\n')) {
            line += 1;
            column = 1;
        } else if c != '\r' {
            column += 1;
        }
    }
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_render_is_byte_identical() {
        for text in [
            "",
            "  \n",
            "// only a comment\n",
            "{}",
            "{\r\n  \"a\": 1, // x\r\n}\r\n",
            "\u{feff}{\"a\": [1, 2,]}\n",
            "{\n\t/* c */ \"a\" : { \"b\" :null }\n\n}",
        ] {
            let doc = Document::parse(text).unwrap();
            assert_eq!(doc.render(), text);
        }
    }

    #[test]
    fn json5_extensions_are_refused() {
        for text in [
            "{'a': 1}",
            "{a: 1}",
            "{\"a\": 0x10}",
            "{\"a\": 1 \"b\": 2}",
            "{\"a\": .5}",
        ] {
            let err = Document::parse(text)
                .err()
                .unwrap_or_else(|| panic!("{text} parsed"));
            assert_eq!(err.kind, ParseErrorKind::Syntax);
            assert_eq!(err.line, 1);
        }
    }

    #[test]
    fn shape_errors_point_at_the_value() {
        let text = "// top\n[\n  1\n]\n";
        let doc = Document::parse(text).unwrap();
        let err = doc.existing_root_object().unwrap_err();
        assert_eq!((err.line, err.column), (2, 1));
        assert!(err.message.contains("an array"), "{}", err.message);
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let text = "{\n  \"hooks\": {},\n  \"x\": 1,\n    \"hooks\": {}\n}";
        let doc = Document::parse(text).unwrap();
        let root = doc.existing_root_object().unwrap().unwrap();
        let err = doc.unique_property(&root, "hooks", "hooks").unwrap_err();
        assert_eq!((err.line, err.column), (4, 5));
    }

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_and_column("ä\nöü x", 7), (2, 3));
        assert_eq!(line_and_column("", 0), (1, 1));
        assert_eq!(line_and_column("a\r\nb\rcd", 6), (3, 2));
    }
}
