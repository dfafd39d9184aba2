// Command reference-operator is the benchmark's peer: a controller-runtime operator in
// Go that does the NasVolume job of aidc-operator with the same protocol and the same
// client limits, so that `npm run bench` can print the two side by side
// (docs/performance.md). It is a measuring stick, not a product: it creates and marks
// Ready, and releases its finalizer on delete without deleting the remote storage.
//
// Per NasVolume: the finalizer and aidc.io/create-pending (a client token) in one
// write; the subscription (the token in the description); a first poll of it: resolved
// at once, aidc.io/external-id with the pending annotations removed in one write, else
// aidc.io/subscription-key and polls until it resolves, then the id; a read of the
// storage; status Ready=True.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const (
	finalizer     = "aidc.io/nasvolume"
	annPending    = "aidc.io/create-pending"
	annKey        = "aidc.io/subscription-key"
	annExternalID = "aidc.io/external-id"
)

var nasGVK = schema.GroupVersionKind{Group: "aidc.io", Version: "v1alpha1", Kind: "NasVolume"}

// service is a minimal client of the Compute and Storage Service: bearer key,
// the {status, message, data} envelope, a client-side rate limit.
type service struct {
	base    string
	key     string
	http    *http.Client
	limiter *rate.Limiter
}

func (s *service) call(ctx context.Context, method, path string, body any, out any) error {
	if err := s.limiter.Wait(ctx); err != nil {
		return err
	}
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, reader)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var env struct {
		Status  json.Number     `json:"status"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&env); err != nil {
		return fmt.Errorf("%s %s: HTTP %d: %w", method, path, res.StatusCode, err)
	}
	if env.Status.String() != "200" {
		return fmt.Errorf("%s %s: status %s: %s", method, path, env.Status, env.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Data, out)
}

type subscription struct {
	State      string `json:"state"`
	InstanceID string `json:"instanceId"`
	Message    string `json:"message"`
}

type reconciler struct {
	client.Client
	svc  *service
	poll time.Duration
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(nasGVK)
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		if controllerutil.RemoveFinalizer(obj, finalizer) {
			return ctrl.Result{}, r.Update(ctx, obj)
		}
		return ctrl.Result{}, nil
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	if ann[annExternalID] != "" {
		return ctrl.Result{}, r.markReady(ctx, obj, ann[annExternalID])
	}
	// 1. The finalizer and the client token, in one write, before any order.
	if ann[annPending] == "" {
		token := newToken()
		pending, _ := json.Marshal(map[string]any{
			"token": token, "at": time.Now().UTC().Format(time.RFC3339), "generation": obj.GetGeneration(),
		})
		if err := r.patchMeta(ctx, obj, map[string]any{annPending: string(pending)}, true); err != nil {
			return ctrl.Result{}, err
		}
		// The patch answered the object as written: go on without waiting for its echo.
		ann = obj.GetAnnotations()
	}
	// 2. The order, then its key.
	key := ann[annKey]
	if key == "" {
		var pending struct {
			Token string `json:"token"`
		}
		_ = json.Unmarshal([]byte(ann[annPending]), &pending)
		spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
		name, _ := spec["name"].(string)
		if name == "" {
			name = obj.GetName()
		}
		desc, _ := spec["description"].(string)
		params := map[string]any{
			"name":        name,
			"description": strings.TrimSpace(desc + " [aidc-token:" + pending.Token + "]"),
		}
		if c, ok := spec["capacityGB"]; ok {
			params["storageCapacity"] = fmt.Sprint(c)
		}
		if m, ok := spec["mountPath"].(string); ok {
			params["mountPath"] = m
		}
		body := map[string]any{"productCode": spec["productCode"], "storageParams": params}
		if err := r.svc.call(ctx, http.MethodPost, "/v1/subscription/nasStorage/create", body, &key); err != nil {
			return ctrl.Result{}, err
		}
		// The first poll comes before the key is written: an order that resolves at
		// once is bound in one write (the id, the pending annotations removed), as the
		// operator does; only one still pending (or whose poll failed) gets its key.
		var first subscription
		err := r.svc.call(ctx, http.MethodGet, "/v1/subscription/nasStorage/result/"+key, nil, &first)
		if err == nil && strings.EqualFold(first.State, "succeeded") && first.InstanceID != "" {
			return r.bind(ctx, obj, first.InstanceID)
		}
		if err := r.patchMeta(ctx, obj, map[string]any{annKey: key}, false); err != nil {
			return ctrl.Result{}, err
		}
		if err == nil && !strings.EqualFold(first.State, "succeeded") {
			return r.settle(ctx, obj, first)
		}
	}
	// 3. Its result; the id binds the object.
	var sub subscription
	if err := r.svc.call(ctx, http.MethodGet, "/v1/subscription/nasStorage/result/"+key, nil, &sub); err != nil {
		return ctrl.Result{}, err
	}
	return r.settle(ctx, obj, sub)
}

// settle acts on a subscription's state: bound when it succeeded, requeued while pending.
func (r *reconciler) settle(ctx context.Context, obj *unstructured.Unstructured, sub subscription) (ctrl.Result, error) {
	switch strings.ToLower(sub.State) {
	case "succeeded":
		if sub.InstanceID == "" {
			return ctrl.Result{}, errors.New("subscription succeeded without an instance id")
		}
		return r.bind(ctx, obj, sub.InstanceID)
	case "failed":
		return ctrl.Result{}, nil
	default:
		return ctrl.Result{RequeueAfter: r.poll}, nil
	}
}

// bind writes the external id with the pending annotations removed, then marks Ready.
func (r *reconciler) bind(ctx context.Context, obj *unstructured.Unstructured, id string) (ctrl.Result, error) {
	if err := r.patchMeta(ctx, obj, map[string]any{annExternalID: id, annPending: nil, annKey: nil}, false); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.markReady(ctx, obj, id)
}

// patchMeta merge-patches annotations (a nil value removes one), with the finalizer.
func (r *reconciler) patchMeta(ctx context.Context, obj *unstructured.Unstructured, ann map[string]any, withFinalizer bool) error {
	meta := map[string]any{"annotations": ann, "resourceVersion": obj.GetResourceVersion()}
	if withFinalizer {
		meta["finalizers"] = append(obj.GetFinalizers(), finalizer)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": meta})
	return r.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

func (r *reconciler) markReady(ctx context.Context, obj *unstructured.Unstructured, id string) error {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return nil
		}
	}
	// Observed before it is called Ready, as the operator does.
	var nas struct {
		Status string `json:"status"`
	}
	if err := r.svc.call(ctx, http.MethodGet, "/v1/nasStorage/instance/"+id+"/detail", nil, &nas); err != nil {
		return err
	}
	status := map[string]any{
		"phase":        "Ready",
		"storageId":    id,
		"remoteStatus": nas.Status,
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "observedGeneration": obj.GetGeneration(),
			"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
			"reason":             "Available", "message": "",
		}},
	}
	patch, _ := json.Marshal(map[string]any{"status": status})
	return r.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func main() {
	var (
		namespace = flag.String("namespace", "", "namespace to watch (default all)")
		baseURL   = flag.String("service-base-url", os.Getenv("AIDC_SERVICE_BASE_URL"), "base URL of the service")
		workers   = flag.Int("workers", 2, "concurrent reconciles")
		qps       = flag.Float64("kube-qps", 50, "Kubernetes client qps")
		burst     = flag.Int("kube-burst", 100, "Kubernetes client burst")
		svcRate   = flag.Float64("service-rate", 50, "service requests per second")
		svcBurst  = flag.Int("service-burst", 100, "service request burst")
		poll      = flag.Duration("poll-interval", time.Second, "interval of subscription polls")
		probeAddr = flag.String("health-probe-bind-address", ":8081", "where /readyz is served")
	)
	// --kubeconfig is controller-runtime's own flag (read by GetConfigOrDie).
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))
	cfg := ctrl.GetConfigOrDie()
	cfg.QPS = float32(*qps)
	cfg.Burst = *burst
	opts := ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: *probeAddr,
	}
	if *namespace != "" {
		opts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}}}
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = mgr.AddReadyzCheck("ping", func(*http.Request) error { return nil })
	_ = mgr.AddHealthzCheck("ping", func(*http.Request) error { return nil })
	svc := &service{
		base:    strings.TrimRight(*baseURL, "/"),
		key:     os.Getenv("AIDC_API_KEY"),
		http:    &http.Client{Timeout: 10 * time.Second},
		limiter: rate.NewLimiter(rate.Limit(*svcRate), *svcBurst),
	}
	watched := &unstructured.Unstructured{}
	watched.SetGroupVersionKind(nasGVK)
	err = ctrl.NewControllerManagedBy(mgr).
		Named("nasvolume").
		For(watched).
		WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
		Complete(&reconciler{Client: mgr.GetClient(), svc: svc, poll: *poll})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
