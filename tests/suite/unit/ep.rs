mod posterior;
mod sites;
