package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The image, built as `scripts/release image` builds it (Dockerfile.prebuilt over the release
// recipe's context: no base image to pull) by Debian's buildah, in a storage of its own that
// the test removes. In it, as its user and in its work directory, `sluice version` says the
// stamped version and the quickstart runs. Skips when buildah is missing (.ci/run installs it).
func TestImage(t *testing.T) {
	dir := imageContext(t)
	if _, err := exec.LookPath("buildah"); err != nil {
		t.Skip("buildah is not installed (Debian's buildah; .ci/run installs it)")
	}
	store := filepath.Join(tmpRoot, "buildah")
	// vfs and chroot: no overlay mounts or namespaces needed, as in a container.
	storage := []string{"--root", store + "/root", "--runroot", store + "/run", "--storage-driver", "vfs"}
	buildah := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("buildah", append(storage, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("buildah %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	const name = "localhost/sluice:deploytest"
	t.Cleanup(func() { _ = exec.Command("buildah", append(storage, "rm", "--all")...).Run() })
	buildah("build", "--isolation", "chroot", "--layers=false", "-f", filepath.Join(root, "Dockerfile.prebuilt"), "-t", name, dir)

	config := buildah("inspect", "--type", "image", "--format", "{{.OCIv1.Config.User}}|{{.OCIv1.Config.WorkingDir}}|{{.OCIv1.Config.Entrypoint}}", name)
	if want := fmt.Sprintf("%d:%d|/work|[/usr/local/bin/sluice]", imageUID, imageUID); strings.TrimSpace(config) != want {
		t.Errorf("image config (user|workdir|entrypoint) = %q, want %q", strings.TrimSpace(config), want)
	}

	ctr := strings.TrimSpace(buildah("from", "--pull-never", name))
	run := func(args ...string) string {
		t.Helper()
		return buildah(append([]string{"run", "--isolation", "chroot", "--user", fmt.Sprintf("%d:%d", imageUID, imageUID), ctr, "--"}, args...)...)
	}
	if out, want := run("/usr/local/bin/sluice", "version"), fmt.Sprintf("sluice %s commit %s built %s\n", stampVersion, stampCommit, stampDate); out != want {
		t.Errorf("sluice version in the image = %q, want %q", out, want)
	}
	src := filepath.Join(tmpRoot, "image-quickstart")
	copyQuickstart(t, src)
	buildah("copy", "--chown", fmt.Sprintf("%d:%d", imageUID, imageUID), ctr, filepath.Join(src, "quickstart.yaml"), "/work/quickstart.yaml")
	checkQuickstartOutput(t, run("/usr/local/bin/sluice", "run", "quickstart.yaml"))
	if out := run("/usr/local/bin/sluice", "validate", "/work/quickstart.yaml"); !strings.Contains(out, "valid") {
		t.Errorf("sluice validate in the image: %s", out)
	}
	os.RemoveAll(src)
}
