//go:build !unix

package checkpoint

import (
	"errors"
	"io/fs"
	"os"
)

// errUnsupported: without flock(2), two feeds could share a checkpoint.
var errUnsupported = errors.New("--checkpoint needs flock(2), which this system does not have")

func lock(string) (*os.File, bool, error) { return nil, false, errUnsupported }

func lockFile(*os.File) error { return errUnsupported }

func syncDir(string) error { return errUnsupported }

func ownFile(fs.FileInfo) bool { return false }
