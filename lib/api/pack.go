package api

// MaxPackJobs bounds the jobs of one SubmitPack call; bsub -pack sends a
// larger file in several calls.
const MaxPackJobs = 10000
