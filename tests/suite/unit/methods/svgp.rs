mod adam;
mod schedule;
mod train;
