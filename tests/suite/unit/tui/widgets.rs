mod line_chart;
