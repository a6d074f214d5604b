package deploy

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// root is the repository's root, where scripts/release and the Dockerfiles are.
const root = ".."

// What the release build is asked to stamp into the binary in these tests.
const (
	stampVersion = "v0.0.0-deploytest"
	stampCommit  = "0123456789abcdef0123456789abcdef01234567"
	stampDate    = "2026-01-02T03:04:05Z"
)

// The image's user, as the Dockerfiles' USER, the release recipe and the StatefulSet give it.
const imageUID = 65532

var (
	contextOnce sync.Once
	contextDir  string
	contextErr  error
	tmpRoot     string
)

func TestMain(m *testing.M) {
	var err error
	if tmpRoot, err = os.MkdirTemp("", "sluice-deploy"); err == nil {
		err = os.Chmod(tmpRoot, 0o755) // the image's user runs the binary from here
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// imageContext runs the release recipe's `context` step once, as the Dockerfile's build stage
// does, and returns the directory: rootfs/ (the image's files, binary included) and work/.
// It skips under -short: the binary takes a build of its own (-trimpath changes every
// package's build).
func imageContext(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds the release binary")
	}
	contextOnce.Do(func() {
		contextDir = filepath.Join(tmpRoot, "context")
		cmd := exec.Command("scripts/release", "context", contextDir)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "VERSION="+stampVersion, "COMMIT="+stampCommit, "DATE="+stampDate, "GOARCH="+runtime.GOARCH)
		if out, err := cmd.CombinedOutput(); err != nil {
			contextErr = fmt.Errorf("scripts/release context: %v\n%s", err, out)
		}
	})
	if contextErr != nil {
		t.Fatal(contextErr)
	}
	return contextDir
}

// releaseBinary is the sluice binary the release recipe built for the image.
func releaseBinary(t *testing.T) string {
	return filepath.Join(imageContext(t), "rootfs", "usr", "local", "bin", "sluice")
}

// The binary the image holds is what FROM scratch needs: statically linked (no ELF
// interpreter, no dynamic section: it needs no libc), stripped, and stamped.
func TestReleaseBinaryIsStaticAndStamped(t *testing.T) {
	bin := releaseBinary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a %v program header: it is dynamically linked and would not run FROM scratch", bin, p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", bin, libs)
	}
	if f.Section(".symtab") != nil || f.Section(".debug_info") != nil {
		t.Errorf("%s keeps its symbol table or DWARF: the release build strips them (-s -w)", bin)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("sluice version: %v", err)
	}
	want := fmt.Sprintf("sluice %s commit %s built %s\n", stampVersion, stampCommit, stampDate)
	if string(out) != want {
		t.Errorf("sluice version = %q, want %q", out, want)
	}
	st, _ := os.Stat(bin)
	t.Logf("release binary: %.1f MB", float64(st.Size())/1e6)
}

// The image's other files: CA certificates for TLS to brokers and clouds, a passwd entry for
// the user the Dockerfiles run as, a /tmp anyone may write, and the work directory.
func TestImageFiles(t *testing.T) {
	dir := filepath.Join(imageContext(t), "rootfs")
	if st, err := os.Stat(filepath.Join(dir, "etc/ssl/certs/ca-certificates.crt")); err != nil || st.Size() < 1000 {
		t.Errorf("the CA bundle is missing or empty: %v", err)
	}
	passwd, err := os.ReadFile(filepath.Join(dir, "etc/passwd"))
	if err != nil || !strings.HasPrefix(string(passwd), fmt.Sprintf("sluice:x:%d:%d:", imageUID, imageUID)) {
		t.Errorf("etc/passwd = %q (%v), want the user sluice with uid %d", passwd, err, imageUID)
	}
	if st, err := os.Stat(filepath.Join(dir, "tmp")); err != nil || st.Mode()&(os.ModeSticky|0o777) != os.ModeSticky|0o777 {
		t.Errorf("tmp/ is not world-writable and sticky: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "..", "work")); err != nil || !st.IsDir() {
		t.Errorf("no work/ beside rootfs/ (the Dockerfiles copy it to /work, owned by the image's user): %v", err)
	}
}

// The quickstart (it needs nothing but the binary) runs from an empty directory, as the
// image's user when the test can switch to it, as it would in the image.
func TestReleaseBinaryRunsQuickstart(t *testing.T) {
	bin := releaseBinary(t)
	dir, err := os.MkdirTemp(tmpRoot, "work")
	if err != nil {
		t.Fatal(err)
	}
	copyQuickstart(t, dir)
	cmd := exec.Command(bin, "run", "quickstart.yaml")
	cmd.Dir = dir
	if os.Getuid() == 0 {
		if err := chownTree(dir, imageUID); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: imageUID, Gid: imageUID}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sluice run quickstart.yaml: %v\n%s", err, out)
	}
	checkQuickstartOutput(t, string(out))
}

// copyQuickstart puts examples/quickstart.yaml alone in dir.
func copyQuickstart(t *testing.T, dir string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "examples", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "quickstart.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
}

func chownTree(dir string, uid int) error {
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(path, uid, uid)
	})
}

// checkQuickstartOutput checks the quickstart's summary: every order read, the priced ones
// in the table, the malformed ones in the dead letters (cmd/sluice's TestQuickstart has the
// numbers and reads the table back).
func checkQuickstartOutput(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{"read 4000 records", "orders_table: wrote 1617 rows; committed through epoch", "dead_letters: wrote 180 rows"} {
		if !strings.Contains(out, want) {
			t.Errorf("the quickstart's output lacks %q:\n%s", want, out)
		}
	}
}

// finalStage returns the instructions of a Dockerfile's last stage, comments dropped.
func finalStage(t *testing.T, name string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	var stage []string
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "FROM "):
			stage = []string{line}
		default:
			stage = append(stage, line)
		}
	}
	return stage
}

// Dockerfile (built from source) and Dockerfile.prebuilt (from files built on the host) make
// the same image: the same final stage, but for where the files come from.
func TestDockerfilesAgree(t *testing.T) {
	src, pre := finalStage(t, "Dockerfile"), finalStage(t, "Dockerfile.prebuilt")
	norm := func(lines []string) string {
		var b bytes.Buffer
		for _, l := range lines {
			l = strings.ReplaceAll(strings.ReplaceAll(l, "--from=build ", ""), " /image/", " ")
			fmt.Fprintln(&b, l)
		}
		return b.String()
	}
	if norm(src) != norm(pre) {
		t.Errorf("the final stages differ:\nDockerfile:\n%s\nDockerfile.prebuilt:\n%s", norm(src), norm(pre))
	}
	if src[0] != "FROM scratch" {
		t.Errorf("Dockerfile's final stage is %q, want FROM scratch", src[0])
	}
	for _, want := range []string{fmt.Sprintf("USER %d:%d", imageUID, imageUID), "WORKDIR /work", `ENTRYPOINT ["/usr/local/bin/sluice"]`} {
		if !strings.Contains(norm(src), want+"\n") {
			t.Errorf("Dockerfile's final stage lacks %q", want)
		}
	}
}
