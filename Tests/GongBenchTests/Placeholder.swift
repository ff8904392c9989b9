// The onset finder's and the reports' tests live here.
