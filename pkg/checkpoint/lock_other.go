//go:build !unix

package checkpoint

import (
	"errors"
	"io/fs"
	"os"
)

// errUnsupported: without flock(2), two feeds could share a checkpoint.
var errUnsupported = errors.New("--checkpoint needs flock(2), which this system does not have")

func (host) lock(string) (*os.File, bool, error) { return nil, false, errUnsupported }

func (host) openRead(string) (*os.File, error) { return nil, errUnsupported }

func lockFile(*os.File) error { return errUnsupported }

func syncDir(string) error { return errUnsupported }

func (host) ownFile(fs.FileInfo) bool { return false }
