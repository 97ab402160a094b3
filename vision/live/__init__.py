"""Live video: frames from a camera or file go in, tracked and voted Layouts come out."""
