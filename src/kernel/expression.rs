//! The one syntax of a kernel built from parts (issue 42), read by `--kernel`, session
//! files, the app's form and Python alike:
//!
//! ```text
//! se(ls=50, var=2500) + se(ls=100) * periodic(period=1, fix=period) + rq + se(ls=0.1)
//! ```
//!
//! `+` is a sum and `*` a product (binding tighter), parentheses group, and a part is a
//! name with optional `key=value` arguments: a number, a name, a quoted string (a
//! column name with spaces) or a list of those in brackets (`dims=[0, 2]`,
//! `fix=[var, period]`). A part that combines kernels takes them first, as arguments
//! without a key (`changepoints(se(ls=1), se(ls=5), locations=[1990])`). This file reads the syntax only, with the position of every
//! part and argument, so that a later error (an unknown part, a key the part does not
//! take) can point into the expression; what the parts mean is the kernels' business.

use std::fmt;

/// Where something is in the expression: a range of character (not byte) positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// A kernel expression's tree.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelExpr {
    Sum(Vec<KernelExpr>),
    Product(Vec<KernelExpr>),
    Part(Part),
}

/// One part, `name(kernel, …, key=value, …)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub name: String,
    /// The kernels it combines (change points'), written before its `key=value`s.
    pub kernels: Vec<KernelExpr>,
    pub args: Vec<Arg>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub key: String,
    pub value: Value,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Number(f64),
    Name(String),
    List(Vec<Value>),
}

/// What is wrong and where: [`ExprError::render`] draws the expression with a caret
/// under the place.
#[derive(Clone, Debug, PartialEq)]
pub struct ExprError {
    pub span: Span,
    pub message: String,
}

impl ExprError {
    pub fn new(span: Span, message: impl Into<String>) -> ExprError {
        ExprError {
            span,
            message: message.into(),
        }
    }

    /// The message, then the expression and a caret line under the span.
    pub fn render(&self, expr: &str) -> String {
        let width = (self.span.end.max(self.span.start + 1)) - self.span.start;
        format!(
            "{} (at character {})\n  {expr}\n  {}{}",
            self.message,
            self.span.start + 1,
            " ".repeat(self.span.start),
            "^".repeat(width)
        )
    }
}

impl KernelExpr {
    /// Reads an expression; the error points at the first thing that is not one.
    pub fn parse(text: &str) -> Result<KernelExpr, ExprError> {
        let mut p = Parser {
            chars: text.chars().collect(),
            at: 0,
        };
        p.skip_space();
        if p.at == p.chars.len() {
            return Err(ExprError::new(
                Span { start: 0, end: 0 },
                "the kernel expression is empty: give a kernel such as se, or a sum \
                 such as se + periodic",
            ));
        }
        let e = p.sum()?;
        p.skip_space();
        match p.peek() {
            None => Ok(e),
            Some(')') => Err(p.error_here("a ')' without its '('")),
            Some(c) => Err(p.error_here(format!("'{c}' where '+', '*' or the end was expected"))),
        }
    }

    /// A part with these arguments (no position: one built, not read).
    pub fn part(name: &str, args: Vec<(String, Value)>) -> KernelExpr {
        KernelExpr::combining(name, Vec::new(), args)
    }

    /// A part combining `kernels`, with these arguments (no position).
    pub fn combining(
        name: &str,
        kernels: Vec<KernelExpr>,
        args: Vec<(String, Value)>,
    ) -> KernelExpr {
        let span = Span { start: 0, end: 0 };
        KernelExpr::Part(Part {
            name: name.to_string(),
            kernels,
            args: args
                .into_iter()
                .map(|(key, value)| Arg { key, value, span })
                .collect(),
            span,
        })
    }

    /// The parts from left to right (a combining part before the kernels it takes).
    pub fn parts(&self) -> Vec<&Part> {
        match self {
            KernelExpr::Part(p) => std::iter::once(p)
                .chain(p.kernels.iter().flat_map(|k| k.parts()))
                .collect(),
            KernelExpr::Sum(v) | KernelExpr::Product(v) => {
                v.iter().flat_map(|e| e.parts()).collect()
            }
        }
    }

    /// The summands of a sum (the whole expression otherwise).
    pub fn summands(&self) -> Vec<&KernelExpr> {
        match self {
            KernelExpr::Sum(v) => v.iter().collect(),
            e => vec![e],
        }
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

/// An argument of a part: `key=value`, or a kernel it combines.
enum ArgKind {
    Key,
    Kernel,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn error_here(&self, message: impl Into<String>) -> ExprError {
        ExprError::new(
            Span {
                start: self.at,
                end: self.at + 1,
            },
            message,
        )
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<KernelExpr, ExprError> {
        let mut terms = vec![self.product()?];
        while self.eat('+') {
            terms.push(self.product()?);
        }
        Ok(if terms.len() == 1 {
            terms.pop().unwrap()
        } else {
            KernelExpr::Sum(terms)
        })
    }

    fn product(&mut self) -> Result<KernelExpr, ExprError> {
        let mut factors = vec![self.factor()?];
        while self.eat('*') {
            factors.push(self.factor()?);
        }
        Ok(if factors.len() == 1 {
            factors.pop().unwrap()
        } else {
            KernelExpr::Product(factors)
        })
    }

    fn factor(&mut self) -> Result<KernelExpr, ExprError> {
        self.skip_space();
        let open = self.at;
        if self.eat('(') {
            let e = self.sum()?;
            if !self.eat(')') {
                return Err(ExprError::new(
                    Span {
                        start: open,
                        end: open + 1,
                    },
                    "this '(' is not closed",
                ));
            }
            // a sum in parentheses inside a product stays one factor
            return Ok(e);
        }
        match self.peek() {
            Some(c) if is_name_start(c) => self.part(),
            Some(c) => Err(self.error_here(format!("'{c}' where a kernel was expected"))),
            None => Err(self.error_here("the expression ends where a kernel was expected")),
        }
    }

    fn name(&mut self) -> String {
        let start = self.at;
        while self.peek().is_some_and(is_name_char) {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    /// What the argument starting here is: a `key=…`, a kernel (a name followed by what
    /// may follow a kernel, or a parenthesis), or neither.
    fn argument_kind(&self) -> Option<ArgKind> {
        let mut at = self.at;
        match self.chars.get(at) {
            Some('(') => return Some(ArgKind::Kernel),
            Some(c) if is_name_start(*c) => {}
            _ => return None,
        }
        while self.chars.get(at).is_some_and(|c| is_name_char(*c)) {
            at += 1;
        }
        while self.chars.get(at).is_some_and(|c| c.is_whitespace()) {
            at += 1;
        }
        match self.chars.get(at) {
            Some('(' | ',' | ')' | '+' | '*') => Some(ArgKind::Kernel),
            _ => Some(ArgKind::Key),
        }
    }

    fn part(&mut self) -> Result<KernelExpr, ExprError> {
        let start = self.at;
        let name = self.name();
        let mut kernels: Vec<KernelExpr> = Vec::new();
        let mut args: Vec<Arg> = Vec::new();
        if self.eat('(') && !self.eat(')') {
            loop {
                self.skip_space();
                let arg_start = self.at;
                match self.argument_kind() {
                    None => {
                        return Err(self.error_here(format!(
                            "an argument of {name} must be key=value (e.g. ls=0.5) or a kernel"
                        )));
                    }
                    Some(ArgKind::Kernel) if !args.is_empty() => {
                        return Err(self.error_here(format!(
                            "a kernel argument of {name} comes before its key=value arguments"
                        )));
                    }
                    Some(ArgKind::Kernel) => kernels.push(self.sum()?),
                    Some(ArgKind::Key) => {
                        let arg = self.keyword(&name, &args, arg_start)?;
                        args.push(arg);
                    }
                }
                if self.eat(')') {
                    break;
                }
                if !self.eat(',') {
                    self.skip_space();
                    return Err(match self.peek() {
                        None => ExprError::new(
                            Span {
                                start,
                                end: start + name.chars().count(),
                            },
                            format!("the arguments of {name} are not closed with ')'"),
                        ),
                        Some(c) => self.error_here(format!(
                            "'{c}' where ',' or ')' was expected in {name}(…)"
                        )),
                    });
                }
            }
        }
        Ok(KernelExpr::Part(Part {
            name,
            kernels,
            args,
            span: Span {
                start,
                end: self.at,
            },
        }))
    }

    /// One `key=value` of part `name`, after `args`.
    fn keyword(&mut self, name: &str, args: &[Arg], arg_start: usize) -> Result<Arg, ExprError> {
        let key = self.name();
        if args.iter().any(|a| a.key == key) {
            return Err(ExprError::new(
                Span {
                    start: arg_start,
                    end: self.at,
                },
                format!("{key} is given twice to {name}"),
            ));
        }
        if !self.eat('=') {
            return Err(self.error_here(format!("'=' after {key} in {name}(…)")));
        }
        let value = self.value()?;
        Ok(Arg {
            key,
            value,
            span: Span {
                start: arg_start,
                end: self.at,
            },
        })
    }

    fn value(&mut self) -> Result<Value, ExprError> {
        self.skip_space();
        let start = self.at;
        match self.peek() {
            Some('[') => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(']') {
                    return Ok(Value::List(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.eat(']') {
                        return Ok(Value::List(items));
                    }
                    if !self.eat(',') {
                        return Err(ExprError::new(
                            Span {
                                start,
                                end: start + 1,
                            },
                            "this '[' is not closed with ']'",
                        ));
                    }
                }
            }
            Some(q @ ('"' | '\'')) => {
                self.at += 1;
                let from = self.at;
                while self.peek().is_some_and(|c| c != q) {
                    self.at += 1;
                }
                if self.peek().is_none() {
                    return Err(ExprError::new(
                        Span {
                            start,
                            end: start + 1,
                        },
                        "this quote is not closed",
                    ));
                }
                let s: String = self.chars[from..self.at].iter().collect();
                self.at += 1;
                Ok(Value::Name(s))
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
                {
                    // a sign only at the start or after an exponent's e
                    let c = self.peek().unwrap();
                    if matches!(c, '-' | '+')
                        && self.at > start
                        && !matches!(self.chars[self.at - 1], 'e' | 'E')
                    {
                        break;
                    }
                    self.at += 1;
                }
                let text: String = self.chars[start..self.at].iter().collect();
                match text.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(Value::Number(v)),
                    _ => Err(ExprError::new(
                        Span {
                            start,
                            end: self.at,
                        },
                        format!("'{text}' is not a finite number"),
                    )),
                }
            }
            Some(c) if is_name_start(c) => Ok(Value::Name(self.name())),
            Some(c) => Err(self.error_here(format!("'{c}' where a value was expected"))),
            None => Err(self.error_here("the expression ends where a value was expected")),
        }
    }
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The canonical form: what a label and a model file show, and what [`KernelExpr::parse`]
/// reads back to the same tree.
impl fmt::Display for KernelExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelExpr::Part(p) => write!(f, "{p}"),
            KernelExpr::Sum(v) => join(f, v, " + ", |_| false),
            // a sum inside a product needs its parentheses back
            KernelExpr::Product(v) => join(f, v, " * ", |e| matches!(e, KernelExpr::Sum(_))),
        }
    }
}

fn join(
    f: &mut fmt::Formatter<'_>,
    items: &[KernelExpr],
    sep: &str,
    wrap: impl Fn(&KernelExpr) -> bool,
) -> fmt::Result {
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        if wrap(e) {
            write!(f, "({e})")?;
        } else {
            write!(f, "{e}")?;
        }
    }
    Ok(())
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.args.is_empty() || !self.kernels.is_empty() {
            f.write_str("(")?;
            let kernels = self.kernels.iter().map(|k| k.to_string());
            let args = self.args.iter().map(|a| format!("{}={}", a.key, a.value));
            for (i, a) in kernels.chain(args).enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(&a)?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // the shortest text that reads back to the same f64, with an exponent far
            // from 1
            Value::Number(v) if *v != 0.0 && (v.abs() < 1e-4 || v.abs() >= 1e15) => {
                write!(f, "{v:e}")
            }
            Value::Number(v) => write!(f, "{v}"),
            Value::Name(s)
                if !s.is_empty() && s.starts_with(is_name_start) && s.chars().all(is_name_char) =>
            {
                f.write_str(s)
            }
            Value::Name(s) if s.contains('"') => write!(f, "'{s}'"),
            Value::Name(s) => write!(f, "\"{s}\""),
            Value::List(v) => {
                f.write_str("[")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
        }
    }
}
