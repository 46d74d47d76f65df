package pacta2a

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

func testTask(id string) *a2a.Task {
	return &a2a.Task{ID: a2a.TaskID(id), ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateAuthRequired},
		Metadata: map[string]any{"pact.missingScopes": []any{"orders:read"}}}
}

// The store keeps the Store contract a2a-go relies on: versions, optimistic
// concurrency, a copy no caller can change, and the SDK's own errors.
func TestTaskStoreContract(t *testing.T) {
	ctx := context.Background()
	s := NewTaskStore(0, 0)
	task := testTask("t1")
	v, err := s.Create(ctx, task)
	if err != nil || v != 1 {
		t.Fatalf("Create = %v, %v", v, err)
	}
	task.Status.State = a2a.TaskStateCompleted // the caller's copy, not the stored one
	if _, err := s.Create(ctx, testTask("t1")); !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
		t.Fatalf("second Create = %v, want ErrTaskAlreadyExists", err)
	}
	got, err := s.Get(ctx, "t1")
	if err != nil || got.Version != 1 || got.Task.Status.State != a2a.TaskStateAuthRequired || got.Task.ContextID != "c1" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	upd := testTask("t1")
	upd.Status.State = a2a.TaskStateWorking
	if v, err := s.Update(ctx, &taskstore.UpdateRequest{Task: upd, PrevVersion: 1}); err != nil || v != 2 {
		t.Fatalf("Update(prev 1) = %v, %v", v, err)
	}
	if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: upd, PrevVersion: 1}); !errors.Is(err, taskstore.ErrConcurrentModification) {
		t.Fatalf("Update(stale prev 1) = %v, want ErrConcurrentModification", err)
	}
	if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: testTask("nope")}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("Update(unknown) = %v, want ErrTaskNotFound", err)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("Get(unknown) = %v, want ErrTaskNotFound", err)
	}
	if got, _ := s.Get(ctx, "t1"); got.Version != 2 || got.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("Get after Update = %+v", got)
	}
	if l, err := s.List(ctx, &a2a.ListTasksRequest{}); err != nil || len(l.Tasks) != 0 {
		t.Fatalf("List = %+v, %v; want an empty list", l, err)
	}
}

// A task is forgotten ttl after its last write, and at most max are held:
// a full store refuses new tasks until old ones expire (positive control:
// it takes one again then).
func TestTaskStoreExpiresAndIsBounded(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_000_000, 0)
	s := NewTaskStore(time.Minute, 2)
	s.now = func() time.Time { return now }
	for _, id := range []string{"a", "b"} {
		if _, err := s.Create(ctx, testTask(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(ctx, testTask("c")); !errors.Is(err, ErrTaskStoreFull) {
		t.Fatalf("Create past max = %v, want ErrTaskStoreFull", err)
	}
	now = now.Add(59 * time.Second)
	if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: testTask("b")}); err != nil { // b written again
		t.Fatal(err)
	}
	now = now.Add(2 * time.Second) // a is 61 s old, b 2 s
	if _, err := s.Get(ctx, "a"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("Get(expired) = %v, want ErrTaskNotFound", err)
	}
	if _, err := s.Get(ctx, "b"); err != nil {
		t.Fatalf("Get(rewritten) = %v", err)
	}
	if _, err := s.Create(ctx, testTask("c")); err != nil {
		t.Fatalf("Create after expiry = %v", err)
	}
	now = now.Add(time.Hour)
	if _, err := s.Create(ctx, testTask("d")); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n != 1 {
		t.Fatalf("Len after everything else expired = %d, want 1", n)
	}
}

// Concurrent turns use the store at once (run with -race).
func TestTaskStoreConcurrent(t *testing.T) {
	ctx := context.Background()
	s := NewTaskStore(0, 0)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				id := fmt.Sprintf("t%d-%d", i, j)
				v, err := s.Create(ctx, testTask(id))
				if err == nil {
					_, err = s.Update(ctx, &taskstore.UpdateRequest{Task: testTask(id), PrevVersion: v})
				}
				if err == nil {
					_, err = s.Get(ctx, a2a.TaskID(id))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := s.Len(); n != 8*50 {
		t.Fatalf("Len = %d, want %d", n, 8*50)
	}
}
