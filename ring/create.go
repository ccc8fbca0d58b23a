package ring

import "github.com/shmloader/shmloader/shm"

// CreateRings creates a job's segments, one per spec in rank order (every spec names the
// same job), and formats each as a ring. The caller closes the job, which removes them.
func CreateRings(dir string, specs []Spec) (*shm.Job, []*Producer, error) {
	geoms := make([]*Geometry, len(specs))
	sizes := make([]int64, len(specs))
	for r, sp := range specs {
		g, err := sp.Layout()
		if err != nil {
			return nil, nil, err
		}
		geoms[r], sizes[r] = g, int64(g.TotalSize)
	}
	job, err := shm.CreateJob(dir, specs[0].Job, sizes)
	if err != nil {
		return nil, nil, err
	}
	prods := make([]*Producer, len(specs))
	for r := range prods {
		if prods[r], err = NewProducer(job.Segments[r].Mem, geoms[r]); err != nil {
			job.Close()
			return nil, nil, err
		}
	}
	return job, prods, nil
}
