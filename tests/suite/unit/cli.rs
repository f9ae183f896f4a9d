mod bench;
mod fit;
