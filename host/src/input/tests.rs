//! Every error path of the table reader, with its exact message.

use super::*;

fn csv(text: &str) -> Result<Table, InputError> {
    parse_table(text, "t.csv", TableFormat::CSV_WITH_HEADER)
}

#[test]
fn reads_quotes_comments_and_trailing_blank_lines() {
    let t = csv("# comment\n  # indented comment\na, \"b, c\" ,d\n1,\"2\",\"x \"\"q\"\"\"\n\n\n")
        .unwrap();
    assert_eq!(t.header().unwrap(), ["a", "b, c", "d"]);
    assert_eq!(t.len(), 1);
    assert_eq!(t.cell(0, 2), "x \"q\"");
    assert_eq!(t.line(0), 4);
    assert_eq!(t.number(0, 1).unwrap(), 2.0);
}

#[test]
fn crlf_lines_are_accepted() {
    let t = csv("a,b\r\n1,2\r\n3,4\r\n").unwrap();
    assert_eq!(t.numeric_rows().unwrap(), [[1.0, 2.0], [3.0, 4.0]]);
}

#[test]
fn whitespace_mode_splits_on_runs_of_spaces() {
    let t = parse_table(
        "  1  2\t3 \n4 5 6\n",
        "w.txt",
        TableFormat::WHITESPACE_NO_HEADER,
    )
    .unwrap();
    assert_eq!(
        t.numeric_rows().unwrap(),
        [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    );
    assert!(t.header().is_none());
}

#[test]
fn header_detection() {
    let detect = TableFormat {
        separator: Separator::Comma,
        header: Header::Detect,
    };
    let with = parse_table("x,y\n1,2\n", "d.csv", detect).unwrap();
    assert_eq!(with.header().unwrap(), ["x", "y"]);
    let without = parse_table("1,2\n3,4\n", "d.csv", detect).unwrap();
    assert!(without.header().is_none());
    assert_eq!(without.len(), 2);
}

#[test]
fn missing_file_names_file_and_os_error() {
    let e = read_table("/nonexistent/qnmc/none.csv", TableFormat::CSV_WITH_HEADER).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Io);
    let text = e.to_string();
    assert!(
        text.starts_with("/nonexistent/qnmc/none.csv: cannot read /nonexistent/qnmc/none.csv: "),
        "{text}"
    );
    assert!(text.contains("No such file"), "{text}");
}

#[test]
fn empty_file() {
    let e = csv("").unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Empty);
    assert_eq!(
        e.to_string(),
        "t.csv: the file is empty (no rows besides comments and blank lines)"
    );
    let e = csv("# only a comment\n\n").unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Empty);
}

#[test]
fn header_without_data() {
    let e = csv("a,b\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv: the file has a header row but no data rows"
    );
}

#[test]
fn ragged_row() {
    let e = csv("a,b,c\n1,2,3\n4,5\n").unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::RaggedRow);
    assert_eq!(
        e.to_string(),
        "t.csv:3: ragged row: expected 3 fields (as in the first row), found 2"
    );
}

#[test]
fn blank_line_between_rows() {
    let e = csv("a\n1\n\n2\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:3: blank line between rows (only trailing blank lines are allowed)"
    );
}

#[test]
fn unterminated_quote_and_junk_after_quote() {
    let e = csv("a,b\n1,\"2\n").unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Format);
    assert_eq!(
        e.to_string(),
        "t.csv:2:2: unterminated quoted field (quotes cannot span lines)"
    );
    let e = csv("a,b\n\"1\"x,2\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:2:1: unexpected 'x' after a closing quote"
    );
}

#[test]
fn non_numeric_cell_is_quoted_with_its_place() {
    let t = csv("x,y\n1,2\n3,4a\n").unwrap();
    let e = t.numeric_column(1).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::NotANumber);
    assert_eq!(
        e.to_string(),
        "t.csv:3:2: cell \"4a\" in column \"y\" is not a number"
    );
    let t = parse_table("1,2\n3,\n", "n.csv", TableFormat::CSV_NO_HEADER).unwrap();
    let e = t.numeric_rows().unwrap_err();
    assert_eq!(
        e.to_string(),
        "n.csv:2:2: cell \"\" in column 2 is not a number"
    );
}

#[test]
fn missing_column_lists_the_columns() {
    let t = csv("# c\nage,income,label\n1,2,3\n").unwrap();
    let e = t.column_index("Label").unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::MissingColumn);
    assert_eq!(
        e.to_string(),
        "t.csv:2: no column named \"Label\"; the columns are \"age\", \"income\", \"label\""
    );
    let t = parse_table("1,2\n", "n.csv", TableFormat::CSV_NO_HEADER).unwrap();
    assert_eq!(
        t.column_index("y").unwrap_err().to_string(),
        "n.csv: no column named \"y\": the file has no header row"
    );
}

#[test]
fn byte_order_mark_is_not_part_of_the_header() {
    let t = csv("\u{feff}label,x\n1,2\n").unwrap();
    assert_eq!(t.column_index("label").unwrap(), 0);
}

#[test]
fn duplicate_header_names_are_refused() {
    let e = csv("x,y,x\n1,2,3\n").unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Format);
    assert_eq!(
        e.to_string(),
        "t.csv:1:3: duplicate column name \"x\" (also column 1): every column needs its own name"
    );
    // R's unnamed row-name column may appear once, empty names are not compared.
    assert!(csv(",,x\n1,2,3\n").is_ok());
}

#[test]
fn other_delimiters_split_and_quote_like_commas() {
    let semicolon = TableFormat {
        separator: Separator::Char(';'),
        header: Header::Present,
    };
    let t = parse_table("a; b;c\n1;\"2;3\"; 4\n", "s.csv", semicolon).unwrap();
    assert_eq!(t.header().unwrap(), ["a", "b", "c"]);
    assert_eq!(t.cell(0, 1), "2;3");
    assert_eq!(t.cell(0, 2), "4");
    let tab = TableFormat {
        separator: Separator::Char('\t'),
        header: Header::Present,
    };
    // A tab delimits; an empty field between two tabs stays a field.
    let t = parse_table("a\tb\tc\n1\t\t3\n", "t.tsv", tab).unwrap();
    assert_eq!(t.cell(0, 1), "");
    assert_eq!(t.width(), 3);
    assert!(Separator::from_name("\"").is_err());
    assert_eq!(Separator::from_name("|").unwrap(), Separator::Char('|'));
}
