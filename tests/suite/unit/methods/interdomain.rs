mod features;
