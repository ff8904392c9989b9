// `gong bench`: what a live session's timing is made of, measured (`JitterBench`), and gong set
// beside the players people use instead, judged by what was heard (`CompareBench`).
